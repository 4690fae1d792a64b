"""Hover to isolate, in the lines view (bertviz's gesture): pointing at a word's label leaves only that
word's lines drawn, the others faded; pointing away brings them all back. A word on the left (a query)
keeps the lines from it, a word on the right (a key) the lines to it. The keyboard does the same: the
labels are one Tab stop, the arrows move between them (↑ ↓ along a side, ← → across), and the focused
word's lines stay.

Plotly has one opacity per trace, and a lines figure's traces are opacity bins holding many words'
lines (dashboard/charts/lines.py); but it draws each line as its own SVG path, so the script fades
paths: a line's word is read from where the path is drawn (its two ends' heights, through the y axis).
The figures are found by their marker (lines.ISOLATE in layout.meta; the labels' traces say their side
in meta); any other chart is left alone. Nothing is sent back to the app.

On a heatmap (the head view's, the learn page's maps: any heatmap over categories) the hovered
cell's row and column are outlined, across the cells, while it is pointed at (BAND_EDGE).

The script is fixed (no user text): tokens reach the page only as Plotly's text; an aria-label repeats
a label's text through setAttribute, never as markup. It is mounted once per run (dashboard/app.py,
beside the clicker), watches the page for charts drawn later, and decorates a chart again after each
Plotly redraw (a resize, a legend click, a new figure in the same chart).
"""

from __future__ import annotations

import streamlit as st

from dashboard.charts.lines import ISOLATE

FADED_OPACITY = 0.07  # a faded line, times its own bin's opacity: a trace of where it was
# A heatmap's hovered row and column: outlined in near-black (not a colour cue), tinted very lightly so
# the printed numbers under the tint read as before. Plotly's own spikes (showspikes, "across") were
# tried: a line through the middle of the cells strikes through their numbers, and Plotly draws an
# opaque line of the background's colour under a spike, so a wide see-through spike is not possible.
BAND_EDGE = "#111111"
BAND_FILL = "rgba(17, 17, 17, 0.06)"
BAND_HALO = "rgba(255, 255, 255, 0.9)"  # under the edge, so it stands out on the darkest cells too

_JS = """
export default function () {
  const iso = (window.__attentionIsolate ??= {});
  if (iso.watching) return;  // one watcher per page, for every run after the first
  iso.watching = true;
  const FADED = "%(faded)s";
  const SIDES = ["query", "key"];
  const marked = (gd) => gd._fullLayout?.meta?.isolate === "%(marker)s";

  function decorate(gd) {
    const s = gd.__isolate;
    s.lines = [];
    s.labels = { query: [], key: [] };
    if (!marked(gd)) return;
    const ya = gd._fullLayout.yaxis;
    const word = (py) => Math.round(-ya.p2l(py));  // word i is drawn at height -i
    for (const g of gd.querySelectorAll(".scatterlayer .trace")) {
      const meta = g.__data__?.[0]?.trace?.meta || {};
      if (meta.words) {
        for (const t of g.querySelectorAll(".textpoint text")) {
          const i = Math.round(-t.parentNode.__data__.y);
          t.__isoWord = { side: meta.words, i };
          t.setAttribute("role", "button");
          const how = meta.words === "query" ? "from" : "to";
          t.setAttribute("aria-label", `show only the lines ${how} “${t.textContent.trim()}”`);
          s.labels[meta.words].push(t);
        }
      } else if (meta.head !== undefined) {
        for (const p of g.querySelectorAll("path.js-line")) {
          const m = /^M[^,]+,([^L]+)L[^,]+,(.+)$/.exec(p.getAttribute("d") || "");
          if (m) s.lines.push({ path: p, query: word(+m[1]), key: word(+m[2]) });
        }
      }
    }
    roving(gd);
    show(gd);
  }

  function roving(gd) {  // one Tab stop: the label last focused, else the first query
    const s = gd.__isolate;
    const all = SIDES.flatMap((side) => s.labels[side]);
    const at = all.find((t) => t.__isoWord.side === s.tab.side && t.__isoWord.i === s.tab.i) || all[0];
    for (const t of all) t.setAttribute("tabindex", t === at ? "0" : "-1");
  }

  function show(gd) {
    const s = gd.__isolate;
    const w = s.pointer || s.focus;
    for (const l of s.lines) l.path.style.opacity = !w || l[w.side] === w.i ? "" : FADED;
    for (const side of SIDES) {
      for (const t of s.labels[side]) {
        const on = w && w.side === side && w.i === t.__isoWord.i;
        t.style.fontWeight = on ? "bold" : "";
      }
    }
    gd.dataset.isolated = w ? `${w.side} ${w.i}` : "";
  }

  function point(gd, e) {  // the label under the pointer (its text, or the dot beside it), if any
    const s = gd.__isolate;
    let hit = null;
    for (const side of SIDES) {
      for (const t of s.labels[side]) {
        const r = t.getBoundingClientRect();
        const inside = e.clientY >= r.top - 2 && e.clientY <= r.bottom + 2
          && e.clientX >= r.left - 12 && e.clientX <= r.right + 12;
        if (inside) hit = t.__isoWord;
      }
    }
    if (hit?.side !== s.pointer?.side || hit?.i !== s.pointer?.i) {
      s.pointer = hit;
      show(gd);
    }
  }

  function move(gd, e) {  // arrows between labels; the keys are not the clicker's or the page's
    const at = e.target.__isoWord;
    if (!at || e.altKey || e.ctrlKey || e.metaKey) return;
    const s = gd.__isolate;
    let { side, i } = at;
    const steps = { ArrowUp: -1, ArrowDown: 1 };
    if (e.key in steps) i += steps[e.key];
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = s.labels[side].length - 1;
    else if (e.key === "ArrowLeft") side = "query";
    else if (e.key === "ArrowRight") side = "key";
    else return;
    e.preventDefault();
    e.stopPropagation();
    const list = s.labels[side];
    const to = Math.max(0, Math.min(i, list.length - 1));
    list.find((t) => t.__isoWord.i === to)?.focus();
  }

  function cross(gd, pt) {  // outline the hovered cell's row and column, on a heatmap of categories
    gd.querySelector(".ae-crosshair")?.remove();
    const xa = pt?.xaxis, ya = pt?.yaxis, on = pt?.fullData;
    if (xa?.type !== "category" || ya?.type !== "category") return;
    // the heatmap's own cell, or a point over it (the head view's clickable cells are a scatter)
    const map = (t) => t.type === "heatmap" && t.xaxis === on.xaxis && t.yaxis === on.yaxis;
    if (!gd._fullData.some(map)) return;
    const band = (a, from, to) => {  // pixels from category `from` to category `to`, edges included
      const [p0, p1] = [a.l2p(from - 0.5), a.l2p(to + 0.5)].map((p) => a._offset + p);
      return [Math.min(p0, p1), Math.abs(p1 - p0)];
    };
    const [x, w] = band(xa, xa.d2l(pt.x), xa.d2l(pt.x)), [y, h] = band(ya, ya.d2l(pt.y), ya.d2l(pt.y));
    // across the cells only (an axis' range may be wider: a scatter's markers pad it)
    const [x0, across] = band(xa, 0, xa._categories.length - 1);
    const [y0, down] = band(ya, 0, ya._categories.length - 1);
    const g = document.createElementNS("http://www.w3.org/2000/svg", "g");
    g.setAttribute("class", "ae-crosshair");
    g.setAttribute("pointer-events", "none");
    const boxes = [[x0, y, across, h], [x, y0, w, down]];
    const pens = [["none", "%(band_halo)s", 4], ["%(band_fill)s", "%(band_edge)s", 2]];
    for (const [fill, stroke, width] of pens) {  // a light halo under the dark edge: seen on any cell
      for (const [rx, ry, rw, rh] of boxes) {
        const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
        const box = { x: rx, y: ry, width: rw, height: rh, fill, stroke, "stroke-width": width };
        for (const [k, v] of Object.entries(box)) r.setAttribute(k, v);
        r.setAttribute("class", fill === "none" ? "halo" : "edge");
        g.appendChild(r);
      }
    }
    gd.querySelector(".main-svg")?.appendChild(g);
  }

  function watch(gd) {
    if (gd.__isolate || typeof gd.on !== "function") return;
    const s = (gd.__isolate = { pointer: null, focus: null, tab: { side: "query", i: 0 } });
    let queued = false;
    const again = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; cross(gd, gd._hoverdata?.[0]); decorate(gd); });
    };
    for (const ev of ["plotly_afterplot", "plotly_relayout", "plotly_restyle"]) gd.on(ev, again);
    gd.on("plotly_hover", (e) => cross(gd, e?.points?.[0]));
    gd.on("plotly_unhover", () => cross(gd, null));
    gd.addEventListener("mousemove", (e) => { if (s.lines.length) point(gd, e); });
    gd.addEventListener("mouseleave", () => { if (s.pointer) { s.pointer = null; show(gd); } });
    gd.addEventListener("focusin", (e) => {
      const w = e.target.__isoWord;
      if (!w) return;
      s.focus = s.tab = w;
      roving(gd);
      show(gd);
    });
    gd.addEventListener("focusout", (e) => {
      if (e.target.__isoWord) { s.focus = null; show(gd); }
    });
    gd.addEventListener("keydown", (e) => move(gd, e));
    decorate(gd);
  }

  let queued = false;
  const scan = () => { queued = false; document.querySelectorAll(".js-plotly-plot").forEach(watch); };
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(scan); }
  }).observe(document.body, { childList: true, subtree: true });
  scan();
}
"""
_JS %= {  # %-formatting: the script's own braces stay as they are
    "faded": FADED_OPACITY,
    "marker": ISOLATE,
    "band_edge": BAND_EDGE,
    "band_fill": BAND_FILL,
    "band_halo": BAND_HALO,
}

_component = st.components.v2.component("attention_explorer.chart_hover", js=_JS)


def isolate_ui() -> None:
    """Mount the watcher (dashboard/app.py, once per run): an empty element at the sidebar's end."""
    with st.sidebar:
        _component(key="chart_hover", height=0)
