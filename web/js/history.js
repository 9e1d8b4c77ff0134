// Undo and redo for the canvas: a list of snapshots (the boxes, their parameters, positions and
// arrows) and where we are in it. A snapshot equal to the current one is not a step.

const LIMIT = 100;

export class History {
  constructor() {
    this.states = [];
    this.at = -1;
  }

  /** Start afresh from `state` (a new, loaded or imported diagram): nothing to undo. */
  reset(state) {
    this.states = [JSON.stringify(state)];
    this.at = 0;
  }

  /** The canvas changed to `state`: it becomes the newest step, and what was undone is gone. */
  record(state) {
    const text = JSON.stringify(state);
    if (text === this.states[this.at]) return;
    this.states = this.states.slice(0, this.at + 1);
    this.states.push(text);
    if (this.states.length > LIMIT) this.states.shift();
    this.at = this.states.length - 1;
  }

  /** The state before the current one, or null. */
  undo() {
    if (this.at <= 0) return null;
    this.at -= 1;
    return JSON.parse(this.states[this.at]);
  }

  /** The state undone last, or null. */
  redo() {
    if (this.at >= this.states.length - 1) return null;
    this.at += 1;
    return JSON.parse(this.states[this.at]);
  }
}
