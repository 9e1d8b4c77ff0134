// The data preview of a box: what the box of the running diagram makes of the newest tuples of
// its inputs, computed by the server and filtered for this session exactly like an output
// (GET /diagrams/NAME/boxes/BOX/preview). Shown under the selected box's properties.
import { get, seg } from "./api.js";
import { el, fill, notice } from "./dom.js";

const ROWS = 20;

/**
 * A "Preview data" button for `box` of the stored diagram `diagram`, and where it answers;
 * `edited()` tells whether the canvas differs from what is stored (and so from what runs).
 */
export function previewPanel(diagram, box, edited) {
  const out = el("div", { class: "preview-result" });
  const run = el("button", { type: "button" }, "Preview data");
  run.addEventListener("click", async () => {
    if (edited()) {
      fill(out, el("p", { class: "hint" }, "Save and deploy the diagram to preview this box's data."));
      return;
    }
    run.disabled = true;
    fill(out, el("p", { class: "hint" }, "Computing…"));
    try {
      const answer = await get(`/diagrams/${seg(diagram)}/boxes/${seg(box)}/preview?rows=${ROWS}`);
      fill(out, previewTable(answer, box));
    } catch (err) {
      const message = el("p", { role: "status" });
      notice(message, err.message, "error");
      fill(out, message);
    } finally {
      run.disabled = false;
    }
  });
  return el("section", { class: "preview", "aria-label": `Data preview of ${box}` },
    el("h3", {}, "Data preview"),
    el("p", { class: "hint" },
      `The newest results of this box (at most ${ROWS}) over recent input tuples, as you may read them.`),
    run, out);
}

/** One small table per result, a row per field: the narrow properties panel shows every field
 * of every result, where one wide table cut all but its first columns. */
function previewTable({ fields: columns, tuples }, box) {
  if (!tuples.length) return el("p", { class: "hint" }, "Nothing you may read reaches this box yet.");
  const shown = (v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v ?? ""));
  const cell = (t, c) => ((t._hidden || []).includes(c) ? "hidden" : shown(t[c]));   // by the data's policy
  return el("div", { class: "preview-records" },
    el("p", { class: "hint" }, `${tuples.length} result${tuples.length === 1 ? "" : "s"} of ${box}, newest first`),
    tuples.map((t, i) => el("table", { class: "record", "aria-label": `Result ${i + 1}` },
      el("tbody", {}, columns.map((c) => el("tr", {}, el("th", { scope: "row" }, c), el("td", {}, cell(t, c))))))));
}
