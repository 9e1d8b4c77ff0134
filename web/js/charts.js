// Small live line charts drawn as inline SVG (no library needed for a sparkline). A chart keeps
// the last `capacity` values and redraws on every push.
import { el } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

export class Sparkline {
  constructor(label, { width = 160, height = 36, capacity = 60, unit = "" } = {}) {
    this.width = width;
    this.height = height;
    this.capacity = capacity;
    this.unit = unit;
    this.values = [];
    this.line = svg("polyline", { class: "spark-line", fill: "none", points: "" });
    this.svg = svg("svg", { class: "spark", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    this.svg.append(svg("rect", { class: "spark-bg", x: 0, y: 0, width, height }), this.line);
    this.readout = el("span", { class: "spark-value" }, "–");
    this.element = el("figure", { class: "sparkline" },
      el("figcaption", {}, label, " ", this.readout), this.svg);
    this.svg.setAttribute("aria-label", label);
  }

  push(value) {
    if (typeof value !== "number" || !Number.isFinite(value)) return;
    this.values.push(value);
    if (this.values.length > this.capacity) this.values.shift();
    this.readout.textContent = `${formatNumber(value)}${this.unit}`;
    this.draw();
  }

  reset() {
    this.values = [];
    this.readout.textContent = "–";
    this.draw();
  }

  draw() {
    const lo = Math.min(0, ...this.values);
    const hi = Math.max(...this.values, lo + 1e-9);
    const step = this.width / Math.max(1, this.capacity - 1);
    const pad = 3;
    const points = this.values.map((v, i) => {
      const y = this.height - pad - ((v - lo) / (hi - lo)) * (this.height - 2 * pad);
      return `${(i * step).toFixed(1)},${y.toFixed(1)}`;
    });
    this.line.setAttribute("points", points.join(" "));
  }
}

export function formatNumber(v) {
  return Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(2);
}
