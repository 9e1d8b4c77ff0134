// Streams and test data: add a schema and an input stream, send a file of tuples (CSV with a
// header row, NDJSON, or a JSON array) into a stream the session may WRITE, and delete a stream
// or schema. The server reads and judges the file exactly as it judges any sender's tuples; its
// answer (how many tuples were stored, or what is wrong and where) shows beside the form. Delete
// is offered only where the session's capabilities allow it, and asks first; the server refuses
// while something uses the object, naming what.
import * as api from "./api.js";
import { capabilities } from "./capabilities.js";
import { confirmDanger } from "./confirm.js";
import { el, errorSlot, field, fill, notice, select, showFieldError, clearFieldError } from "./dom.js";

const TYPES = ["timestamp", "string", "double", "long", "boolean"];
const CONTENT_TYPES = { csv: "text/csv", ndjson: "application/x-ndjson", jsonl: "application/x-ndjson", json: "application/json" };

export class StreamsPage {
  constructor(root) {
    this.streams = select([], { name: "stream" });
    this.schemas = select([], { name: "schema" });
    this.doomed = select([], { name: "object" });   // "type/name" of the object to delete
    this.message = el("p", { class: "notice", role: "status" });
    fill(root, el("h2", {}, "Streams and test data"), this.message,
      el("div", { class: "forms" }, this.schemaForm(), this.streamForm(), this.uploadForm(), this.deleteForm()));
  }

  async refresh() {
    const { objects } = await api.get("/catalog");
    const names = (type) => objects.filter((o) => o.type === type).map((o) => o.name);
    for (const [picker, type] of [[this.streams, "stream"], [this.schemas, "schema"]]) {
      const current = picker.value;
      fill(picker, names(type).map((n) => el("option", { value: n }, n)));
      if (names(type).includes(current)) picker.value = current;
    }
    const doomed = this.doomed.value;
    const offered = objects.filter((o) => o.type === "stream" || o.type === "schema")
      .map((o) => `${o.type}/${o.name}`);
    fill(this.doomed, el("option", { value: "" }, "choose a stream or schema"),
      offered.map((key) => el("option", { value: key }, key.replace("/", " "))));
    this.doomed.value = offered.includes(doomed) ? doomed : "";
    await this.offerDelete();
  }

  deleteForm() {
    this.deleteButton = el("button", { type: "submit", class: "danger", disabled: true }, "Delete");
    this.deleteHint = el("p", { class: "hint", "aria-live": "polite" });
    this.doomed.addEventListener("change", () => this.offerDelete());
    const form = el("form", { class: "card", "aria-label": "Delete a stream or schema" },
      el("h3", {}, "Delete a stream or schema"), field("Object", this.doomed), this.deleteHint,
      this.deleteButton);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const [type, name] = this.doomed.value.split("/");
      const gone = type === "stream" ? "Its stored tuples go with it." : "";
      if (!(await confirmDanger(`Delete ${type} ${name}? ${gone}`.trim(), "Delete"))) return;
      try {
        await api.del(`/${type}s/${api.seg(name)}`);
        notice(this.message, `Deleted ${type} ${name}.`, "ok");
        await this.refresh();
      } catch (error) {
        notice(this.message, error.message, "error");
      }
    });
    return form;
  }

  /** Enable Delete for the chosen object only if the session may delete it (asked, not tried). */
  async offerDelete() {
    const [type, name] = this.doomed.value.split("/");
    let may = () => false;
    if (name) {
      try {
        may = await capabilities({ type, name });
      } catch (error) {
        if (error.status !== 404) throw error;   // gone meanwhile: nothing to delete
      }
    }
    const allowed = Boolean(name) && may(`${type}s.delete`);
    this.deleteButton.disabled = !allowed;
    this.deleteHint.textContent = !name || allowed ? ""
      : `Only the owner of ${type} ${name} or an administrator may delete it.`;
  }

  schemaForm() {
    const name = el("input", { name: "schema-name", required: true });
    const fields = el("textarea", { name: "fields", rows: 4, required: true,
      placeholder: "time timestamp\nsymbol string\nprice double" });
    const eventTime = el("input", { name: "event-time", placeholder: "time" });
    const error = errorSlot();
    return this.form("Add a schema", [field("Schema name", name),
      field("Fields", fields, `one "name type" a line; types: ${TYPES.join(", ")}`),
      field("Event-time field", eventTime, "a timestamp field; left empty: arrival time"), error],
    "Add schema", async () => {
      const parsed = parseFields(fields.value);
      if (parsed.error) {
        showFieldError(error, fields, [parsed.error]);
        return null;
      }
      clearFieldError(error, fields);
      const body = { name: name.value, fields: parsed.fields };
      if (eventTime.value) body.event_time = eventTime.value;
      await api.post("/schemas", body);
      return `Added schema ${name.value}.`;
    });
  }

  streamForm() {
    const name = el("input", { name: "stream-name", required: true });
    return this.form("Add a stream", [field("Stream name", name), field("Of schema", this.schemas)],
      "Add stream", async () => {
        await api.post("/streams", { name: name.value, schema: this.schemas.value });
        return `Added stream ${name.value}.`;
      });
  }

  uploadForm() {
    const file = el("input", { type: "file", name: "tuples-file", accept: ".csv,.ndjson,.jsonl,.json", required: true });
    return this.form("Send test data", [field("Into stream", this.streams),
      field("File", file, "CSV with a header row naming the stream's fields, NDJSON or a JSON array")],
    "Send", async () => {
      const chosen = file.files[0];
      const kind = chosen.name.split(".").pop().toLowerCase();
      const type = CONTENT_TYPES[kind];
      if (!type) throw new Error(`${chosen.name}: send a .csv, .ndjson, .jsonl or .json file`);
      const stream = this.streams.value;
      const { count } = await api.send("POST", `/streams/${api.seg(stream)}/tuples`, await chosen.text(), type);
      return `Stored ${count} tuples from ${chosen.name} in ${stream}.`;
    });
  }

  /** A form whose submit runs `act` and shows its message, or the server's error. */
  form(title, fields, button, act) {
    const form = el("form", { class: "card", "aria-label": title }, el("h3", {}, title), fields,
      el("button", { type: "submit", class: "primary" }, button));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const done = await act();
        if (done) {
          notice(this.message, done, "ok");
          await this.refresh();
        }
      } catch (error) {
        notice(this.message, error.message, "error");   // it names each problem, once
      }
    });
    return form;
  }
}

/** "name type" lines -> {name: type}, or the first problem found. */
export function parseFields(text) {
  const fields = {};
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  for (const [i, line] of lines.entries()) {
    const parts = line.split(/\s+/);
    if (parts.length !== 2) return { error: `line ${i + 1}: write a field as "name type"` };
    fields[parts[0]] = parts[1];
  }
  if (!lines.length) return { error: "a schema needs at least one field" };
  return { fields };
}
