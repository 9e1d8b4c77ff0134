// The editor's query tab: the CQL of the diagram on the canvas, when it has one, and CQL typed
// here drawn on the canvas. The server does both (POST /diagrams/cql prints a document, POST
// /diagrams/validate compiles CQL); the editor only lays the compiled document out.
import * as api from "./api.js";
import { el, field, fill, notice } from "./dom.js";

export class QueryTab {
  /**
   * hooks.document() -> the canvas's document, or null when the canvas is empty;
   * hooks.name() -> the diagram name typed in the toolbar ("" when none);
   * hooks.draw(document) puts a compiled document on the canvas;
   * hooks.run(action) runs a button's action as the editor's toolbar does (busy, errors shown).
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.edited = false;   // typed since the text was last printed from, or drawn on, the canvas
    this.text = el("textarea", { name: "cql", rows: 12, spellcheck: false, autocomplete: "off",
      oninput: () => { this.edited = true; } });
    this.message = el("p", { class: "notice", role: "status" });
    this.problemsBox = el("section", { class: "problems", "aria-label": "Query problems" });
    this.element = el("div", { class: "query-tab" },
      field("CQL query", this.text,
        "SELECT … FROM stream [window] WHERE … GROUP BY …; see docs/cql.md. Draw on canvas turns it into boxes and arrows."),
      el("div", { class: "query-tools" },
        el("button", { type: "button", class: "primary", onclick: () => hooks.run(() => this.draw()) }, "Draw on canvas"),
        this.message),
      this.problemsBox);
  }

  /** The tab opens: show the canvas's CQL, unless the text holds a query not yet drawn. */
  async show() {
    if (this.edited) return;
    const doc = this.hooks.document();
    this.setProblems([]);
    if (!doc) {
      this.text.value = "";
      notice(this.message, "The canvas is empty: type a query and draw it.", "info");
      return;
    }
    try {
      this.text.value = (await api.post("/diagrams/cql", { document: doc })).cql;
      notice(this.message, "The CQL of the diagram on the canvas.", "ok");
    } catch (error) {
      if (!error.problems.length) throw error;
      this.text.value = "";
      this.setProblems(error.problems);   // the server's reasons, at their paths in the document
      notice(this.message, "The diagram on the canvas has no CQL form.", "error");
    }
  }

  /** Compile the typed CQL; draw it on the canvas, or list its problems by line and column. */
  async draw() {
    const name = this.hooks.name();
    let answer;
    try {
      answer = await api.post("/diagrams/validate", { cql: this.text.value, ...(name ? { name } : {}) });
    } catch (error) {
      if (!error.problems.length) throw error;
      answer = { valid: false, problems: error.problems };
    }
    if (!answer.valid) {
      this.setProblems(answer.problems);
      const n = answer.problems.length;
      notice(this.message, n === 1 ? "The query has 1 problem." : `The query has ${n} problems.`, "error");
      return;
    }
    this.setProblems([]);
    this.edited = false;
    notice(this.message, "", "info");
    this.hooks.draw(answer.document);
  }

  setProblems(problems) {
    fill(this.problemsBox, problems.length ? el("ul", {}, problems.map((p) => {
      const at = positionOf(p.path);
      return el("li", { "data-code": p.code },
        at ? el("button", { type: "button", class: "link", onclick: () => this.caret(at) },
          `line ${at.line}, column ${at.column}`) : el("code", {}, p.path || "query"),
        ": ", p.message);
    })) : null);
  }

  /** Put the text cursor at a problem's line and column. */
  caret({ line, column }) {
    const lines = this.text.value.split("\n");
    const offset = lines.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0) + column - 1;
    this.text.focus();
    this.text.setSelectionRange(offset, offset);
  }
}

/** "cql.2.46" -> {line: 2, column: 46}; any other path (a document's) -> null. */
export function positionOf(path) {
  const match = /^cql\.(\d+)\.(\d+)$/.exec(path || "");
  return match ? { line: Number(match[1]), column: Number(match[2]) } : null;
}
