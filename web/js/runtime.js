// Admin console, runtime: how the stream runtime fares (its Spark driver, real-time mode's
// slots, which server holds the runtime lease) and which diagrams share one execution: diagrams
// whose plans differ only in names run as one set of Spark queries (docs/architecture.md,
// "Shared execution"). Read from
// GET /system/status each time the tab is shown or the console refreshes.
import * as api from "./api.js";
import { el, fill, table } from "./dom.js";

export class RuntimePanel {
  constructor(root) {
    this.root = root;
  }

  async refresh() {
    this.show(await api.get("/system/status"));
  }

  show({ runtime, lease }) {
    const holder = lease ? `Runtime lease: held by ${lease.holder}${lease.this_server ? " (this server)" : ""}.`
      : "Runtime lease: none (a single server).";
    if (!runtime) {
      fill(this.root, el("h2", {}, "Runtime"),
        el("p", {}, "This server does not run the stream runtime."), el("p", {}, holder));
      return;
    }
    const { driver, realtime, shared } = runtime;
    const health = driver.alive ? "answering" : "not answering";
    fill(this.root, el("h2", {}, "Runtime"),
      el("p", {}, `Spark driver: ${health}; replaced ${driver.restarts} time${driver.restarts === 1 ? "" : "s"}.`),
      el("p", {}, realtimeText(realtime)),
      el("p", {}, holder),
      el("h3", {}, "Shared executions"),
      shared.length ? table(["Execution", "Shares", "State", "Diagrams"], shared.map((s) => [
        s.key, sharesText(s), s.state, s.members.map(memberText).join(", "),
      ]), "Diagrams that run as one execution")
        : el("p", { class: "empty" }, "No diagrams share an execution."));
  }
}

/** Real-time mode's task slots: how many its queries hold of those they may (docs/deploy.md). */
function realtimeText({ slots, in_use: inUse }) {
  if (!slots) return "Real-time mode: off on this server (realtime_slots is 0).";
  return `Real-time slots: ${inUse} of ${slots} in use.`;
}

/** What an execution runs once: a whole plan, or a prefix its members filter differently
 * (the conditions all their filters have are evaluated once too). */
function sharesText(execution) {
  if (execution.shares !== "prefix") return "whole plan";
  const common = execution.common_conditions;
  return common === undefined ? "prefix" : `prefix, ${common} common condition${common === 1 ? "" : "s"}`;
}

/** A member, its state and what it does to its host's prefix: its own conditions, and the
 * fields of the map that ends its plan. */
function memberText(member) {
  const filters = member.filters && member.filters.length ? ` where ${member.filters.join(" AND ")}` : "";
  const fields = member.fields ? ` then ${Object.entries(member.fields).map(([f, e]) => `${f}: ${e}`).join(", ")}` : "";
  return `${member.diagram} (${member.state})${filters}${fields}`;
}
