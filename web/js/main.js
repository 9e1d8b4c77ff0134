// Start-up and navigation: log in (or resume the session the browser holds), open the socket,
// show one page at a time (#editor, #results, #dashboard, #catalog, #admin), and refresh the page in view
// whenever the server announces a catalog change.
import * as api from "./api.js";
import { AdminConsole } from "./admin.js";
import { loginView, logout, resume } from "./auth.js";
import { capabilities } from "./capabilities.js";
import { CatalogBrowser } from "./catalog.js";
import { Dashboard } from "./dashboard.js";
import { el, fill } from "./dom.js";
import { Editor } from "./editor.js";
import * as feeds from "./feeds.js";
import { changePassword } from "./password.js";
import { Results } from "./results.js";
import * as socket from "./socket.js";
import { StreamsPage } from "./streams.js";

const $ = (id) => document.getElementById(id);
const PAGES = { editor: "Editor", results: "Live results", dashboard: "Dashboard", catalog: "Catalog", streams: "Streams", admin: "Admin" };
let pages = null;   // page name -> {view, section}, built after login

async function start() {
  api.onSessionEnded(() => showLogin("Your session has ended. Please log in again."));
  socket.on("catalog_changed", () => refreshCurrent());
  socket.on("disconnect", (reason) => {
    if (reason === "io server disconnect") showLogin("The server ended your session. Please log in again.");
  });
  window.addEventListener("hashchange", () => showPage(currentPage()));
  const me = await resume();
  if (me) await enter(me);
  else showLogin();
}

function showLogin(reason) {
  socket.disconnect();
  feeds.forget();
  pages?.editor.view.close();
  pages?.dashboard.view.close();
  pages = null;
  $("app").hidden = true;
  fill($("whoami"));
  const login = $("login");
  login.hidden = false;
  const view = loginView(login, (me) => enter(me));
  if (reason) view.say(reason);
  view.focus();
}

async function enter(me) {
  $("login").hidden = true;
  $("app").hidden = false;
  socket.connect(me.csrf_token);
  fill($("whoami"), el("span", { class: "user" }, me.user), " ",
    el("span", { class: "roles" }, me.roles.join(", ")), " ",
    el("button", { type: "button", onclick: changePassword }, "Change password"), " ",
    el("button", { type: "button", onclick: async () => {
      if (!(await pages.editor.view.mayDiscard())) return;   // unsaved work on the canvas stays
      await logout();
      showLogin();
    } }, "Log out"));
  const may = await capabilities();
  pages = {
    editor: { view: new Editor($("page-editor")) },
    results: { view: new Results($("page-results")) },
    dashboard: { view: new Dashboard($("page-dashboard")) },
    catalog: { view: new CatalogBrowser($("page-catalog")) },
    streams: { view: new StreamsPage($("page-streams")) },
  };
  if (may("users.index")) pages.admin = { view: new AdminConsole($("page-admin")) };
  fill($("nav"), Object.entries(PAGES).filter(([key]) => pages[key]).map(([key, label]) =>
    el("a", { href: `#${key}`, "data-page": key }, label)));
  await pages.editor.view.open();
  await showPage(currentPage());
}

function currentPage() {
  const wanted = location.hash.slice(1);
  return pages && pages[wanted] ? wanted : "editor";
}

async function showPage(name) {
  if (!pages) return;
  for (const key of Object.keys(PAGES)) $(`page-${key}`).hidden = key !== name;
  for (const link of $("nav").querySelectorAll("a")) {
    if (link.dataset.page === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  await refreshCurrent();
}

async function refreshCurrent() {
  if (!pages) return;
  const page = pages[currentPage()];
  try {
    await page.view.refresh();
  } catch (error) {
    if (error.status !== 401) console.error(error);
  }
}

start();
