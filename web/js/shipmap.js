// The live map: ship positions and tracks from the subscribed output, drawn by the vendored
// Leaflet (the global `L`) over Natural Earth's coastline (world-atlas's 1:10m land, read by
// topojson-client, the global `topojson`): no tile server, so it works where none is reachable.
// Only what the server delivered to this session is drawn; each ship is coloured by what it
// came from (its sources, or a text field such as its company), and the user's own port
// (their attributes' box, the `self` a port's policy reads) is drawn as an area.
import * as api from "./api.js";
import { el, field, fill, pick, select } from "./dom.js";

const COAST = "/static/vendor/world-atlas/land-10m.json";
const LATITUDE = ["lat", "latitude"];
const LONGITUDE = ["lon", "lng", "long", "longitude"];
const SHIP_ID = ["mmsi", "sid", "ship", "id", "name"];
const SOURCES = "_sources";
const TRACK = 60;       // positions kept per ship
const MOST_SHIPS = 500; // ships beyond those first seen are left out (a note says so)
const COLOURS = 6;      // --series-1 .. --series-6 (web/css/sluice.css), then again from 1
const STRAIT = [[1.0, 103.3], [1.5, 104.5]];   // the view before the first position

let coastline = null;   // one fetch per page, shared by every map

/** The fields a map needs, {lat, lon, id}, from an output's field names; null without both
 * a latitude and a longitude. */
export function mapFields(names) {
  const pick = (candidates) => names.find((n) => candidates.includes(n.toLowerCase())) || null;
  const lat = pick(LATITUDE);
  const lon = pick(LONGITUDE);
  return lat && lon ? { lat, lon, id: pick(SHIP_ID) } : null;
}

/** What a map of an output with fields [[name, type], ...] draws: {fields: mapFields' answer,
 * texts: the text fields it may colour by}; null without a position to draw. */
export function mapChoices(entries) {
  const fields = mapFields(entries.map(([name]) => name));
  if (!fields) return null;
  const texts = entries.filter(([name, type]) => type === "string" && !name.startsWith("_")).map(([name]) => name);
  return { fields, texts };
}

/** A user's port as a [[south, west], [north, east]] box, from attributes named as a port's
 * boundary policy reads them (`self.west`, `self.south`, `self.east`, `self.north`). */
export function portBox(attributes) {
  const [west, south, east, north] = ["west", "south", "east", "north"].map((k) => attributes?.[k]);
  const numbers = [west, south, east, north].every((v) => typeof v === "number" && Number.isFinite(v));
  return numbers && south < north && west < east ? [[south, west], [north, east]] : null;
}

export class ShipMap {
  /** `onchange()` is called when the user picks another colouring (a dashboard saves it). */
  constructor(onchange = () => {}) {
    this.colourPicker = select([], { name: "map-colour", onchange: () => { this.recolour(); onchange(); } });
    this.area = el("div", { class: "map-area", role: "region", "aria-label": "Ship positions" });
    this.legend = el("ul", { class: "map-legend", "aria-label": "Colours" });
    this.rows = el("tbody");
    this.note = el("p", { class: "hint", "aria-live": "polite" });
    this.element = el("div", { class: "ship-map" },
      el("div", { class: "chart-choices" }, field("Colour by", this.colourPicker)),
      this.area, this.legend, this.note,
      el("details", { class: "map-ships" }, el("summary", {}, "Ships on the map"),
        el("table", {},
          el("thead", {}, el("tr", {}, ["ship", "colour", "lat", "lon", "positions"]
            .map((h) => el("th", { scope: "col" }, h)))),
          this.rows)));
    this.map = null;
    this.ships = new Map();
    this.groups = new Map();
  }

  /** A new output with map fields `fields` ({lat, lon, id}) and text fields `texts` to colour
   * by; draws the session user's port (whoami's attributes) when they describe one. */
  async start(fields, texts) {
    this.fields = fields;
    this.clear();
    const company = texts.find((t) => t.toLowerCase() === "company");
    fill(this.colourPicker, el("option", { value: SOURCES }, "sources"),
      texts.map((t) => el("option", { value: t }, t)));
    this.colourPicker.value = company || SOURCES;
    this.build();
    try {
      const { attributes } = await api.get("/auth/whoami");
      this.drawPort(portBox(attributes));
      await this.drawCoast();
    } catch (error) {
      this.note.textContent = `The map is incomplete: ${error.message}`;
    }
  }

  /** The user's choices, {colour}, to keep; `choose` gives them back (one no longer offered is
   * left as it is). */
  choices() {
    return { colour: this.colourPicker.value };
  }

  choose({ colour } = {}) {
    if (!pick(this.colourPicker, colour)) return;
    this.recolour();
  }

  build() {
    if (this.map) return;
    this.map = L.map(this.area, { zoomSnap: 0.25, attributionControl: true, worldCopyJump: false });
    this.map.attributionControl.setPrefix(false).addAttribution("Coastline: Natural Earth");
    this.map.fitBounds(STRAIT);
    this.shipLayer = L.layerGroup().addTo(this.map);
    new ResizeObserver(() => this.map.invalidateSize()).observe(this.area);
  }

  async drawCoast() {
    if (!coastline) {
      coastline = fetch(COAST).then((r) => {
        if (!r.ok) throw new Error(`the coastline answered HTTP ${r.status}`);
        return r.json();
      }).then((topo) => topojson.feature(topo, topo.objects.land));
      coastline.catch(() => { coastline = null; });   // the next map tries again
    }
    const land = await coastline;
    if (this.coast) return;
    this.coast = L.geoJSON(land, { interactive: false, className: "map-land" }).addTo(this.map);
    this.coast.bringToBack();
  }

  drawPort(box) {
    if (this.port) this.port.remove();
    this.port = box ? L.rectangle(box, { className: "port-area", interactive: true })
      .bindTooltip("Your port (your attributes' west, south, east, north)").addTo(this.map) : null;
  }

  clear() {
    if (this.shipLayer) this.shipLayer.clearLayers();
    this.ships.clear();
    this.groups.clear();
    fill(this.rows);
    fill(this.legend);
    this.fitted = false;
    this.note.textContent = "";
  }

  /** New tuples, as they arrive: each moves its ship (keyed by its id field) and extends its track. */
  add(tuples) {
    if (!this.map || !this.fields) return;
    const { lat, lon, id } = this.fields;
    let dropped = 0;
    for (const tuple of tuples) {
      const at = [tuple[lat], tuple[lon]];
      if (!at.every((v) => typeof v === "number" && Number.isFinite(v)) || Math.abs(at[0]) > 90 || Math.abs(at[1]) > 180) continue;
      const key = String(id ? tuple[id] : `${at[0]},${at[1]}`);
      let ship = this.ships.get(key);
      if (!ship) {
        if (this.ships.size >= MOST_SHIPS) { dropped += 1; continue; }
        ship = this.newShip(key);
      }
      ship.tuple = tuple;
      ship.points.push(at);
      if (ship.points.length > TRACK) ship.points.shift();
      ship.track.setLatLngs(ship.points);
      ship.marker.setLatLng(at);
      this.paint(ship);
    }
    if (dropped) this.note.textContent = `Showing the first ${MOST_SHIPS} ships; others are left out.`;
    if (!this.fitted && this.ships.size) {
      this.fitted = true;
      const bounds = L.latLngBounds([...this.ships.values()].map((s) => s.points.at(-1)));
      this.map.fitBounds(bounds.pad(0.3), { maxZoom: 11 });
    }
  }

  newShip(key) {
    const track = L.polyline([], { className: "ship-track", interactive: false }).addTo(this.shipLayer);
    const marker = L.circleMarker([0, 0], { radius: 6, className: "ship-marker" })
      .bindTooltip(el("span", {}, key)).addTo(this.shipLayer);   // a node: Leaflet sets a string as HTML
    const cells = [el("td", {}, key), el("td"), el("td"), el("td"), el("td")];
    const row = el("tr", { "data-ship": key }, cells);
    this.rows.append(row);
    const ship = { key, track, marker, row, cells, points: [], group: null };
    this.ships.set(key, ship);
    return ship;
  }

  /** The ship's colour from its group (the chosen field's value), and its row's values. */
  paint(ship) {
    const group = this.groupOf(ship.tuple);
    if (group !== ship.group) {
      ship.group = group;
      const series = `series-${this.colour(group)}`;
      for (const layer of [ship.marker, ship.track]) {
        const path = layer.getElement();
        path.classList.remove(...[...path.classList].filter((c) => c.startsWith("series-")));
        path.classList.add(series);
        path.dataset.group = group;
      }
      ship.marker.getElement().dataset.ship = ship.key;
      ship.cells[1].textContent = group;
    }
    const [lat, lon] = ship.points.at(-1);
    ship.cells[2].textContent = lat.toFixed(4);
    ship.cells[3].textContent = lon.toFixed(4);
    ship.cells[4].textContent = String(ship.points.length);
  }

  groupOf(tuple) {
    const by = this.colourPicker.value;
    const value = tuple[by];
    if (by === SOURCES) return (value || []).join(", ") || "(none)";
    return value === null || value === undefined ? "(none)" : String(value);
  }

  /** A group's colour number, given in the order groups are first seen; the legend lists them. */
  colour(group) {
    if (!this.groups.has(group)) {
      const number = (this.groups.size % COLOURS) + 1;
      this.groups.set(group, number);
      this.legend.append(el("li", { "data-group": group },
        el("span", { class: `swatch series-${number}`, "aria-hidden": "true" }), group));
    }
    return this.groups.get(group);
  }

  recolour() {
    this.groups.clear();
    fill(this.legend);
    for (const ship of this.ships.values()) {
      ship.group = null;
      this.paint(ship);
    }
  }
}
