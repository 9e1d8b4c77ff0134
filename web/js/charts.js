// Live time charts drawn by uPlot (web/vendor/uplot, loaded by index.html as the global
// `uPlot`): a time axis, one line per series with a legend, and a tooltip with the values under
// the cursor. Colours are the page's CSS variables, read when the plot is built and again when
// the system's colour scheme changes, so a chart follows dark mode like the rest of the page.
import { el, fill } from "./dom.js";

const SERIES_COLOURS = ["--series-1", "--series-2", "--series-3", "--series-4", "--series-5", "--series-6"];
const DARK = window.matchMedia("(prefers-color-scheme: dark)");

export class TimeChart {
  /** label: the chart's caption; unit: appended to values; utc: times in UTC (event times)
   * rather than the viewer's clock; capacity: the points kept, oldest dropped first. */
  constructor(label, { unit = "", utc = false, capacity = 300, height = 160, compact = false } = {}) {
    this.label = label;
    this.unit = unit;
    this.utc = utc;
    this.capacity = capacity;
    this.height = height;
    this.compact = compact;
    this.timeLabel = utc ? "time (UTC)" : "time";
    this.names = [];
    this.times = [];
    this.columns = [];
    this.plot = null;
    this.ticks = [];    // the time axis's labels as last drawn
    this.levels = [];   // the value axis's
    this.area = el("div", { class: "chart-plot" });
    this.caption = el("figcaption", {}, label);
    this.element = el("figure", { class: compact ? "chart compact" : "chart" }, this.caption, this.area);
    this.resized = new ResizeObserver(() => this.fit());
    this.resized.observe(this.area);
    this.rebuild = () => this.build();
    DARK.addEventListener("change", this.rebuild);
  }

  /** Start again, with one series per name, `timeLabel` naming the time axis, `label` the chart. */
  reset(names = [], timeLabel = this.timeLabel, label = this.label) {
    this.label = label;
    this.caption.textContent = label;
    this.names = names;
    this.timeLabel = timeLabel;
    this.times = [];
    this.columns = names.map(() => []);
    this.build();
  }

  /** Add points [[seconds, {name: value}], ...] and redraw once. Times may come out of order
   * (several groups per window, a catch-up read): each point goes to its place in time. */
  add(points) {
    for (const [time, values] of points) {
      if (!Number.isFinite(time)) continue;
      let at = this.times.length;
      while (at > 0 && this.times[at - 1] > time) at -= 1;
      this.times.splice(at, 0, time);
      this.names.forEach((name, i) => this.columns[i].splice(at, 0, finite(values[name])));
    }
    const extra = this.times.length - this.capacity;
    if (extra > 0) {
      this.times.splice(0, extra);
      for (const column of this.columns) column.splice(0, extra);
    }
    if (this.plot) this.plot.setData(this.data());
    else this.build();
    if (this.plot && this.plot.cursor.idx == null) this.showLatest(this.plot);
  }

  /** With the cursor away, the legend shows each series' latest value (not blanks). */
  showLatest(plot) {
    const last = (column) => {
      let i = column.length - 1;
      while (i > 0 && column[i] == null) i -= 1;
      return i < 0 ? null : i;
    };
    plot.setLegend({ idxs: plot.data.map(last) }, false);
  }

  /** Stop following the page's size and scheme (the chart is gone for good). */
  dispose() {
    this.resized.disconnect();
    DARK.removeEventListener("change", this.rebuild);
    this.plot?.destroy();
    this.plot = null;
  }

  data() {
    return [this.times, ...this.columns];
  }

  /** A new plot for the current series and colours; none until there is data and room. */
  build() {
    this.plot?.destroy();
    this.plot = null;
    fill(this.area);
    const width = this.area.clientWidth;
    if (!this.names.length || !this.times.length || width < 40) return;
    this.plot = new window.uPlot(this.options(width), this.data(), this.area);
    this.plot.ctx.canvas.setAttribute("role", "img");
    this.describe();
  }

  fit() {
    const width = this.area.clientWidth;
    if (!this.plot) this.build();
    else if (width >= 40 && width !== this.plot.width) this.plot.setSize({ width, height: this.height });
  }

  options(width) {
    const style = getComputedStyle(this.area);
    const colour = (name) => style.getPropertyValue(name).trim();
    const font = `${this.compact ? 10 : 11}px system-ui, sans-serif`;
    const axis = { stroke: colour("--muted"), font, grid: { stroke: colour("--line"), width: 1 },
      ticks: { stroke: colour("--line"), width: 1, size: 4 } };
    return {
      width,
      height: this.height,
      tzDate: this.utc ? (t) => window.uPlot.tzDate(new Date(t * 1000), "Etc/UTC") : undefined,
      scales: {
        x: { time: true, range: () => this.span() },
        y: { range: (u, min, max) => valueRange(min, max) },
      },
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      series: [
        { label: this.timeLabel, value: (u, t) => (t == null ? "–" : this.when(t)) },
        ...this.names.map((name, i) => ({
          label: name,
          stroke: colour(SERIES_COLOURS[i % SERIES_COLOURS.length]),
          width: 1.5,
          spanGaps: true,
          value: (u, v, series, idx) => this.format(idx == null ? v : atTime(u.data, series, idx)),
        })),
      ],
      axes: [
        { ...axis, size: this.compact ? 26 : 32, space: this.compact ? 56 : 70,
          values: (u, splits) => (this.ticks = splits.map((t) => this.tick(t, splits))) },
        { ...axis, size: this.compact ? 34 : 44, space: this.compact ? 20 : 30,
          values: (u, splits) => (this.levels = splits.map(shortNumber)) },
      ],
      hooks: { draw: [() => this.describe()] },
      plugins: [tooltip(this)],
    };
  }

  /** The time axis's range: the data's, or a minute ending at a lone point (uPlot would show
   * the day after it). */
  span() {
    const first = this.times[0];
    const last = this.times[this.times.length - 1];
    return last - first < 1 ? [last - 60, last] : [first, last];
  }

  /** The drawn axes in words, for screen readers (a canvas has no text of its own). */
  describe() {
    const ticks = this.ticks;
    const levels = this.levels;
    const range = ticks.length ? `, ${this.timeLabel} ${ticks[0]} to ${ticks[ticks.length - 1]}` : "";
    const values = levels.length ? `, values ${levels[0]} to ${levels[levels.length - 1]}${this.unit}` : "";
    this.plot?.ctx.canvas.setAttribute("aria-label", `${this.label}: ${this.names.join(", ")}${values}${range}`);
  }

  /** A time axis label, as precise as the visible span needs. */
  tick(t, splits) {
    const span = splits.length > 1 ? splits[splits.length - 1] - splits[0] : 0;
    const parts = this.parts(t);
    if (span > 2 * 86400) return `${parts.month}-${parts.day}`;
    return span > 2 * 3600 ? `${parts.hour}:${parts.minute}` : `${parts.hour}:${parts.minute}:${parts.second}`;
  }

  /** A point's time in full, for the legend and the tooltip. */
  when(t) {
    const p = this.parts(t);
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
  }

  parts(t) {
    const d = new Date(t * 1000);
    const [year, month, day, hour, minute, second] = this.utc
      ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]
      : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()];
    const two = (n) => String(n).padStart(2, "0");
    return { year, month: two(month), day: two(day), hour: two(hour), minute: two(minute), second: two(second) };
  }

  format(v) {
    return v == null ? "–" : `${formatNumber(v)}${this.unit}`;
  }
}

/** A series' value at the time of point `idx`: several points may share a time (an aggregate's
 * groups, each its own series), so any of them with a value for the series. */
function atTime(data, series, idx) {
  const times = data[0];
  let at = idx;
  while (at > 0 && times[at - 1] === times[idx]) at -= 1;
  for (; at < times.length && times[at] === times[idx]; at += 1) if (data[series][at] != null) return data[series][at];
  return null;
}

/** A uPlot plugin: a box beside the cursor with the time and each shown series' value there. */
function tooltip(chart) {
  const tip = el("div", { class: "chart-tip", role: "tooltip", hidden: true });
  return {
    hooks: {
      init: [(u) => u.over.append(tip)],
      setCursor: [(u) => {
        const { left, top, idx } = u.cursor;
        if (idx == null || left < 0) {
          tip.hidden = true;
          if (idx == null) chart.showLatest(u);
          return;
        }
        const values = u.series.map((series, i) => (i && series.show ? atTime(u.data, i, idx) : null));
        fill(tip, el("div", { class: "chart-tip-time" }, chart.when(u.data[0][idx])),
          values.map((v, i) => (v == null ? null : el("div", {}, `${u.series[i].label}: ${chart.format(v)}`))));
        tip.hidden = false;
        // fixed to the viewport, so a narrow panel's overflow does not cut it; on the side
        // of the cursor with more room
        const at = u.over.getBoundingClientRect();
        const x = at.left + left;
        const y = Math.max(0, at.top + top - 8);
        tip.style.transform = x > window.innerWidth / 2
          ? `translate(calc(${x - 10}px - 100%), ${y}px)` : `translate(${x + 10}px, ${y}px)`;
      }],
    },
  };
}

function finite(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** An axis label short enough for a narrow chart: 1500 as 1.5k, 2000000 as 2M. */
/** The value axis's range. Nothing measured yet (a latency before the first delivery): still an
 * axis, from 0 to 1. One value only (a first sample, a constant rate of 0): from 0 to twice it,
 * so the line sits mid-height on an axis with several labels rather than uPlot's lone one. */
function valueRange(min, max) {
  if (min == null || (min === 0 && max === 0)) return [0, 1];
  if (min === max) return min > 0 ? [0, 2 * max] : [2 * min, 0];
  return window.uPlot.rangeNum(min, max, 0.1, true);
}

function shortNumber(v) {
  for (const [size, suffix] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]]) {
    if (Math.abs(v) >= size) return `${+(v / size).toPrecision(3)}${suffix}`;
  }
  return String(+v.toPrecision(3));
}

function formatNumber(v) {
  if (v == null) return "";
  return Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(2);
}
