// Pan and zoom for an SVG drawing: drag to pan, wheel or pinch to zoom around the pointer, keys
// (+ − 0 and arrows) when the canvas has focus, fit to the drawing. A press that moved is a pan, not a
// click: clicks after a pan are swallowed.

const MIN = 0.08;
const NARROW = 600; // a canvas narrower than this is a phone's: the first view keeps text readable
const MAX = 3;

export class PanZoom {
  constructor(svg, layer) {
    this.svg = svg;
    this.layer = layer;
    this.x = 0;
    this.y = 0;
    this.k = 1;
    this.pointers = new Map();
    this.moved = false;
    this.bounds = {width: 0, height: 0};
    svg.addEventListener('wheel', (event) => this.onWheel(event), {passive: false});
    svg.addEventListener('pointerdown', (event) => this.onDown(event));
    svg.addEventListener('pointermove', (event) => this.onMove(event));
    svg.addEventListener('pointerup', (event) => this.onUp(event));
    svg.addEventListener('pointercancel', (event) => this.onUp(event));
    svg.addEventListener('click', (event) => {
      if (this.moved) {
        event.stopPropagation();
        event.preventDefault();
        this.moved = false;
      }
    }, true);
  }

  apply() {
    this.layer.setAttribute('transform', `translate(${this.x.toFixed(2)} ${this.y.toFixed(2)}) scale(${this.k.toFixed(4)})`);
    this.svg.dataset.zoom = this.k.toFixed(3);
  }

  point(event) {
    const box = this.svg.getBoundingClientRect();
    return {x: event.clientX - box.left, y: event.clientY - box.top};
  }

  zoomAt(factor, cx, cy) {
    const k = Math.min(MAX, Math.max(MIN, this.k * factor));
    const ratio = k / this.k;
    this.x = cx - (cx - this.x) * ratio;
    this.y = cy - (cy - this.y) * ratio;
    this.k = k;
    this.apply();
  }

  zoomCenter(factor) {
    const box = this.svg.getBoundingClientRect();
    this.zoomAt(factor, box.width / 2, box.height / 2);
  }

  panBy(dx, dy) {
    this.x += dx;
    this.y += dy;
    this.apply();
  }

  /**
   * Show the whole drawing (never enlarged past 1:1), centred; `widthOnly`: fit its width and start at
   * its top (a tall trace stays readable and is scrolled by dragging).
   */
  fit(width = this.bounds.width, height = this.bounds.height, {widthOnly = false, readable = false} = {}) {
    this.bounds = {width, height};
    const box = this.svg.getBoundingClientRect();
    if (!width || !height || !box.width || !box.height) return;
    const margin = 16;
    const across = (box.width - 2 * margin) / width;
    const down = (box.height - 2 * margin) / height;
    this.k = Math.max(MIN, Math.min(1, widthOnly ? across : Math.min(across, down)));
    if (readable && this.k < 1 && box.width < NARROW) {
      // a phone: text at its real size (never under 11px), the drawing's top left first; drag to see more
      this.k = 1;
      this.x = margin;
      this.y = margin;
      this.apply();
      return;
    }
    this.x = (box.width - width * this.k) / 2;
    this.y = widthOnly ? margin : Math.max(margin, (box.height - height * this.k) / 2);
    this.apply();
  }

  /** Bring a drawing rectangle into view (keeps the zoom unless it does not fit). */
  reveal(rect) {
    const box = this.svg.getBoundingClientRect();
    const margin = 24;
    if (rect.width * this.k > box.width - 2 * margin || rect.height * this.k > box.height - 2 * margin) {
      this.k = Math.max(MIN, Math.min(1, (box.width - 2 * margin) / rect.width, (box.height - 2 * margin) / rect.height));
    }
    const left = rect.x * this.k + this.x;
    const top = rect.y * this.k + this.y;
    if (left < margin || left + rect.width * this.k > box.width - margin) this.x = box.width / 2 - (rect.x + rect.width / 2) * this.k;
    if (top < margin || top + rect.height * this.k > box.height - margin) this.y = box.height / 2 - (rect.y + rect.height / 2) * this.k;
    this.apply();
  }

  onWheel(event) {
    event.preventDefault();
    const {x, y} = this.point(event);
    const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    this.zoomAt(Math.exp(-delta * 0.0015), x, y);
  }

  onDown(event) {
    if (event.button !== 0 && event.pointerType === 'mouse') return;
    this.pointers.set(event.pointerId, this.point(event));
    this.start = {...this.point(event), x0: this.x, y0: this.y};
    this.moved = false;
    if (this.pointers.size === 2) this.pinch = this.spread();
  }

  spread() {
    const [a, b] = [...this.pointers.values()];
    return {distance: Math.hypot(a.x - b.x, a.y - b.y) || 1, cx: (a.x + b.x) / 2, cy: (a.y + b.y) / 2};
  }

  onMove(event) {
    if (!this.pointers.has(event.pointerId)) return;
    const here = this.point(event);
    this.pointers.set(event.pointerId, here);
    if (this.pointers.size === 2 && this.pinch) {
      const now = this.spread();
      this.zoomAt(now.distance / this.pinch.distance, now.cx, now.cy);
      this.panBy(now.cx - this.pinch.cx, now.cy - this.pinch.cy);
      this.pinch = now;
      this.moved = true;
      return;
    }
    const dx = here.x - this.start.x;
    const dy = here.y - this.start.y;
    if (!this.moved && Math.hypot(dx, dy) < 5) return;
    if (!this.moved) this.svg.setPointerCapture?.(event.pointerId);
    this.moved = true;
    this.x = this.start.x0 + dx;
    this.y = this.start.y0 + dy;
    this.apply();
  }

  onUp(event) {
    this.pointers.delete(event.pointerId);
    if (this.pointers.size < 2) this.pinch = null;
    if (this.pointers.size === 1) {
      const [rest] = this.pointers.values();
      this.start = {...rest, x0: this.x, y0: this.y};
    }
  }

  onKey(event) {
    const step = 60;
    const actions = {
      '+': () => this.zoomCenter(1.2),
      '=': () => this.zoomCenter(1.2),
      '-': () => this.zoomCenter(1 / 1.2),
      0: () => this.fit(),
      ArrowLeft: () => this.panBy(step, 0),
      ArrowRight: () => this.panBy(-step, 0),
      ArrowUp: () => this.panBy(0, step),
      ArrowDown: () => this.panBy(0, -step),
    };
    const action = actions[event.key];
    if (!action) return false;
    event.preventDefault();
    action();
    return true;
  }
}
