// Streams and test data: add a schema and an input stream, and send a file of tuples (CSV with
// a header row, NDJSON, or a JSON array) into a stream the session may WRITE. The server reads
// and judges the file exactly as it judges any sender's tuples; its answer (how many tuples were
// stored, or what is wrong and where) shows beside the form.
import * as api from "./api.js";
import { el, errorSlot, field, fill, notice, select, showFieldError, clearFieldError } from "./dom.js";

const TYPES = ["timestamp", "string", "double", "long", "boolean"];
const CONTENT_TYPES = { csv: "text/csv", ndjson: "application/x-ndjson", jsonl: "application/x-ndjson", json: "application/json" };

export class StreamsPage {
  constructor(root) {
    this.streams = select([], { name: "stream" });
    this.schemas = select([], { name: "schema" });
    this.message = el("p", { class: "notice", role: "status" });
    fill(root, el("h2", {}, "Streams and test data"), this.message,
      el("div", { class: "forms" }, this.schemaForm(), this.streamForm(), this.uploadForm()));
  }

  async refresh() {
    const { objects } = await api.get("/catalog");
    const names = (type) => objects.filter((o) => o.type === type).map((o) => o.name);
    for (const [picker, type] of [[this.streams, "stream"], [this.schemas, "schema"]]) {
      const current = picker.value;
      fill(picker, names(type).map((n) => el("option", { value: n }, n)));
      if (names(type).includes(current)) picker.value = current;
    }
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
        const where = (error.details?.errors || []).slice(0, 3)
          .map((e) => ` (tuple ${e.index + 1}${e.field ? `, field ${e.field}` : ""}: ${e.reason})`).join("");
        notice(this.message, error.message + where, "error");
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
