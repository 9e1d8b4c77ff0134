// Which fields of an output a chart draws by default: its measures, the quantities that vary,
// never its identifiers or keys. A ship's mmsi (about 563 million) drawn beside its latitude
// flattens the latitude to a line, and a patient's number draws a sawtooth as the patients take
// turns. One rule, written once, from the schema: a numeric field is a measure unless its name
// ends in a word that names a thing rather than an amount (mmsi, patient, sensor_id, zip_code,
// ...): a key. An identifier is worth something else: one line per identifier.

const NUMERIC = new Set(["long", "double"]);
const THINGS = new Set(["id", "ids", "key", "code", "uuid", "mmsi", "imo", "callsign", "no", "nr",
  "num", "number", "seq", "index", "idx", "patient", "user", "account", "customer", "device",
  "sensor", "station", "vessel", "ship", "zip", "postcode", "phone"]);

/** The words of a field's name: snake_case, kebab-case and camelCase alike, lower-cased. */
export function words(name) {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[^A-Za-z0-9]+/).filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** Whether a field names a thing (an identifier or key) rather than an amount. */
export function isIdentifier(name) {
  return THINGS.has(words(name).at(-1));
}

/**
 * Split an output's fields ([[name, type]], internal "_" fields left out) into the measures a
 * chart draws and the identifiers it may draw one line per (identifiers first, then other text).
 */
export function chartFields(entries) {
  const visible = entries.filter(([name]) => !name.startsWith("_"));
  const measures = visible.filter(([name, type]) => NUMERIC.has(type) && !isIdentifier(name))
    .map(([name]) => name);
  const ids = visible.filter(([name, type]) => (NUMERIC.has(type) || type === "string") && isIdentifier(name))
    .map(([name]) => name);
  const text = visible.filter(([name, type]) => type === "string" && !ids.includes(name)).map(([name]) => name);
  return { measures, splits: [...ids, ...text] };
}
