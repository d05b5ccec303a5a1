// graphscope report: the page's program (embedded in every report; it reads
// the JSON in #gs-data and draws everything; nothing is fetched).
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('gs-data').textContent);
  // A run's graph that the page shows exactly as an earlier one names it
  // (same_as): its own label, process and note, the rest read through it.
  for (const g of D.graphs) if (g.same_as !== undefined) Object.setPrototypeOf(g, D.graphs[g.same_as]);
  const S = (i) => (i < 0 || i === null || i === undefined ? '' : D.strings[i]);
  const app = document.getElementById('app');
  const CAT_COLORS = ['#2f6fd0', '#17a2b8', '#5bc0de', '#8e44ad', '#7f8c8d', '#f0ad4e', '#d9534f', '#e4606d',
                      '#b03a48', '#5cb85c', '#c7cbd3'];
  const DIFF = D.diff || null;
  const state = { graph: 0, sel: null, matches: [] };
  const panes = [];  // mounted pictures: {gi, side, view, svg, shapes: Map(name -> element), vb, full}

  // ---- small helpers
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs) for (const k in attrs) {
      if (k === 'class') e.className = attrs[k];
      else if (k === 'text') e.textContent = attrs[k];
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of kids) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  const svgNS = 'http://www.w3.org/2000/svg';
  function sv(tag, attrs) {
    const e = document.createElementNS(svgNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function us(x) {
    if (x === null || x === undefined) return '-';
    const a = Math.abs(x);
    return (a >= 100 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toFixed(3)) + ' \u00b5s';
  }
  const nsus = (ns) => us(ns / 1000);
  const pct = (x) => (100 * x).toFixed(1) + '%';
  const G = (gi) => D.graphs[gi];
  function nodeLink(gi, v, text) {
    text = text || ('node ' + v + ' ' + S(G(gi).name[v]));
    // The whole text on hover: where the details are narrow it ends in an ellipsis.
    return el('span', { class: 'link', 'data-node': v, title: text, onclick: (ev) => { ev.stopPropagation(); select(gi, [v], v, true); } }, text);
  }
  function dependents(gi) {
    const g = G(gi);
    if (g._out) return g._out;
    g._out = g.deps.map(() => []);
    g.deps.forEach((ds, v) => ds.forEach((u) => { if (u < g._out.length) g._out[u].push(v); }));
    return g._out;
  }
  function shapeNodes(gi) {  // shape name -> nodes it draws
    const g = G(gi);
    if (g._byShape) return g._byShape;
    g._byShape = new Map();
    g.shape.forEach((s, v) => {
      if (s < 0) return;
      const k = S(s);
      if (!g._byShape.has(k)) g._byShape.set(k, []);
      g._byShape.get(k).push(v);
    });
    return g._byShape;
  }

  // ---- header
  function header() {
    const h = el('header');
    h.append(el('h1', { text: D.title }));
    if (D.sources.length) h.append(el('div', { class: 'sub', text: 'from ' + D.sources.join(', ') + ' \u00b7 graphscope ' + D.version }));
    for (const n of D.notes) h.append(el('div', { class: 'note', text: n }));
    const total = D.graphs.reduce((a, g) => a + g.nodes, 0);
    const f = el('div', { class: 'facts' });
    f.append(el('span', { id: 'gs-graph-count', 'data-count': D.graphs.length, text: D.graphs.length + (D.graphs.length === 1 ? ' graph, ' : ' graphs, ') }));
    f.append(el('b', { id: 'gs-node-count', 'data-count': total, text: total + (total === 1 ? ' node' : ' nodes') }));
    f.append(document.createTextNode(D.graphs.length > 1 ? ' in their root graphs' : ' in the root graph'));
    h.append(f);
    return h;
  }

  // ---- an --exec run: its parts are report_run.js's
  const RUN = D.run ? graphscopeRunPage({ D, S, G, el, us, showGraph, select }) : null;
  // ---- the run's ledger, first on its page: report_ledger.js's
  const LEDGER = D.ledger || D.ledger_note ? graphscopeLedgerPage({ D, el, sv, showGraph, select }) : null;

  // ---- the picture: pan, zoom, click
  function mountPicture(container, gi, side) {
    container.textContent = '';
    const g = G(gi);
    const pane = { gi, side, view: container, svg: null, shapes: new Map() };
    panes.push(pane);
    const noPicture = (why) => {
      container.append(el('div', { class: 'nopicture', text: why + '. Search, the tables and the details still list every node.' }));
      return pane;
    };
    if (!g.svg) return noPicture(g.svg_note || 'no picture');
    // A picture the browser cannot parse (it never should: names are
    // escaped) says so instead of showing the parser's error page.
    const doc = new DOMParser().parseFromString(g.svg, 'image/svg+xml');
    if (doc.documentElement.nodeName !== 'svg' || doc.getElementsByTagName('parsererror').length)
      return noPicture('no picture: the browser could not read it');
    const svg = document.importNode(doc.documentElement, true);
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    container.append(svg);
    pane.svg = svg;
    for (const n of svg.querySelectorAll('g.node')) {
      const t = n.querySelector('title');
      if (t) pane.shapes.set(t.textContent, n);
    }
    const vb = svg.viewBox.baseVal;
    pane.full = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    fit(pane);
    const byShape = shapeNodes(gi);
    svg.addEventListener('click', (ev) => {
      if (pane.moved) return;
      const n = ev.target.closest('g.node');
      if (!n) return;
      const t = n.querySelector('title');
      const nodes = t ? byShape.get(t.textContent) : null;
      if (nodes && nodes.length) select(gi, nodes, nodes[0], false);
    });
    // Drag to pan, wheel to zoom around the pointer.
    let drag = null;
    container.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, y: ev.clientY }; pane.moved = false; });
    window.addEventListener('mousemove', (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { pane.moved = true; container.classList.add('dragging'); }
      if (!pane.moved) return;
      const s = scale(pane);
      setView(pane, pane.vb.x - dx / s, pane.vb.y - dy / s, pane.vb.w, pane.vb.h);
      drag = { x: ev.clientX, y: ev.clientY };
    });
    window.addEventListener('mouseup', () => { drag = null; container.classList.remove('dragging'); });
    container.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = container.getBoundingClientRect();
      zoomAt(pane, Math.pow(1.0015, ev.deltaY), (ev.clientX - r.left) / r.width, (ev.clientY - r.top) / r.height);
    }, { passive: false });
    return pane;
  }
  function scale(pane) {
    const r = pane.view.getBoundingClientRect();
    return Math.min(r.width / pane.vb.w, r.height / pane.vb.h) || 1;
  }
  function setView(pane, x, y, w, h) {
    pane.vb = { x, y, w, h };
    pane.svg.setAttribute('viewBox', x + ' ' + y + ' ' + w + ' ' + h);
  }
  function fit(pane) {
    if (!pane.svg) return;
    // The picture's own box: the view's inside, without its border.
    const f = pane.full, W = pane.view.clientWidth || 800, H = pane.view.clientHeight || 500;
    const whole = Math.min(W / f.w, H / f.h);
    // Never smaller than MIN_SCALE (the pictures' 10 pt labels at 8 px or
    // more): a picture too large to read whole opens at its top, around its
    // first node, and pan and zoom show the rest ('whole graph' shows all).
    const k = Math.min(Math.max(whole, MIN_SCALE), 1.25);
    const w = W / k, h = H / k;
    if (k === whole || (f.w <= w && f.h <= h)) return setView(pane, f.x + (f.w - w) / 2, f.y + (f.h - h) / 2, w, h);
    let x = f.x + (f.w - w) / 2, y = f.y;
    if (f.w > w) {
      // Wider than the view (most often by the title's lines): around the
      // first node, from just above it; the title's cut lines stay above.
      const first = pane.svg.querySelector('g.node');  // Graphviz writes the nodes in the graph's order
      if (first) {
        const b = first.getBBox(), m = pane.svg.getScreenCTM().inverse().multiply(first.getScreenCTM());
        const p = pane.svg.createSVGPoint();
        p.x = b.x + b.width / 2;
        p.y = b.y;
        const q = p.matrixTransform(m);
        x = Math.min(Math.max(q.x - w / 2, f.x), f.x + f.w - w);
        y = Math.max(f.y, q.y - 6);
      }
    }
    setView(pane, x, y, w, h);
  }
  const MIN_SCALE = 0.8;
  window.graphscopeMinScale = MIN_SCALE;  // the browser test reads it
  function zoomAt(pane, k, fx, fy) {
    if (!pane.svg) return;
    const v = pane.vb;
    const w = Math.min(Math.max(v.w * k, 20), pane.full.w * 4), h = v.h * (w / v.w);
    setView(pane, v.x + (v.w - w) * fx, v.y + (v.h - h) * fy, w, h);
  }
  function centerOn(pane, elem) {
    if (!pane.svg || !elem) return;
    const b = elem.getBBox(), v = pane.vb;
    // From the element's own coordinates to the picture's (viewBox) ones.
    const m = pane.svg.getScreenCTM().inverse().multiply(elem.getScreenCTM());
    const p = pane.svg.createSVGPoint();
    p.x = b.x + b.width / 2;
    p.y = b.y + b.height / 2;
    const q = p.matrixTransform(m);
    const inside = q.x > v.x && q.x < v.x + v.w && q.y > v.y && q.y < v.y + v.h;
    if (!inside) setView(pane, q.x - v.w / 2, q.y - v.h / 2, v.w, v.h);
  }

  // ---- selection and search
  function paneShapes(pane, nodes) {
    const g = G(pane.gi), out = new Set();
    for (const v of nodes) {
      const s = g.shape[v];
      if (s >= 0 && pane.shapes.has(S(s))) out.add(pane.shapes.get(S(s)));
    }
    return out;
  }
  function mark(cls, gi, nodes) {
    for (const pane of panes) {
      if (pane.svg) for (const e of pane.svg.querySelectorAll('g.node.' + cls)) e.classList.remove(cls);
      if (pane.gi === gi && pane.svg) for (const e of paneShapes(pane, nodes)) e.classList.add(cls);
    }
    for (const r of document.querySelectorAll('.timeline rect.item.' + cls)) r.classList.remove(cls);
    if (gi === state.graph) {
      const set = new Set(nodes);
      for (const r of document.querySelectorAll('.timeline rect.item')) if (set.has(+r.dataset.node)) r.classList.add(cls);
    }
  }
  function select(gi, nodes, focus, center) {
    if (DIFF === null && gi !== state.graph) showGraph(gi);
    state.sel = { gi, nodes, focus };
    mark('gs-sel', gi, nodes);
    if (center) for (const pane of panes) if (pane.gi === gi) centerOn(pane, [...paneShapes(pane, [focus])][0]);
    details(gi, nodes, focus);
  }
  // What a click on node v of graph gi does (the browser test selects every node through it).
  window.graphscopeSelect = (gi, v) => select(gi, [v], v, false);
  function search(q) {
    q = q.trim().toLowerCase();
    const res = document.getElementById('gs-results'), count = document.getElementById('gs-match-count');
    res.textContent = '';
    const found = [];
    const gis = DIFF ? [0, 1] : [state.graph];
    if (q) for (const gi of gis) {
      const g = G(gi);
      for (let v = 0; v < g.nodes; ++v) {
        if (S(g.name[v]).toLowerCase().includes(q) || S(g.what[v]).toLowerCase().includes(q) ||
            S(g.module[v]).toLowerCase().includes(q) || S(g.origin[v]).toLowerCase().includes(q)) found.push([gi, v]);
      }
    }
    state.matches = found;
    count.textContent = q ? found.length + (found.length === 1 ? ' node matches' : ' nodes match') : '';
    count.dataset.count = found.length;
    for (const gi of gis) mark('gs-match', gi, found.filter((m) => m[0] === gi).map((m) => m[1]));
    // A result says the node's op and module too: "3 vectorized_elementwise_kernel<GeluCUDAKernelImpl(float)>
    // (aten::gelu, model.layers.0.mlp.act_fn)"; the op is the origin's "op" line (html_report.cc's origin_text).
    const originBrief = (g, v) => {
      const op = /^op (.+)$/m.exec(S(g.origin[v])), parts = [];
      if (op) parts.push(op[1]);
      if (S(g.module[v])) parts.push(S(g.module[v]));
      return parts.length ? ' (' + parts.join(', ') + ')' : '';
    };
    for (const [gi, v] of found.slice(0, 300))
      res.append(el('span', null, nodeLink(gi, v, (DIFF ? (gi ? 'B ' : 'A ') : '') + v + ' ' + S(G(gi).name[v]) + originBrief(G(gi), v))));
    if (found.length > 300) res.append(el('span', { class: 'muted', text: '... and ' + (found.length - 300) + ' more' }));
    if (found.length) {
      const gi = found[0][0];
      select(gi, found.filter((m) => m[0] === gi).map((m) => m[1]), found[0][1], true);
    }
  }

  // ---- details of a node
  function details(gi, nodes, v) {
    const box = document.getElementById('details');
    box.textContent = '';
    const g = G(gi), p = g.profile;
    box.dataset.node = v;
    box.dataset.graph = gi;
    box.append(el('h3', { text: (DIFF ? (gi ? 'B: ' : 'A: ') : '') + 'node ' + v + ': ' + S(g.name[v]) }));
    const t = el('table');
    // A value left out (null, undefined, '') adds nothing: append() would write "null".
    const row = (k, ...val) => { const td = el('td'); val.forEach((x) => { if (x !== null && x !== undefined && x !== '') td.append(x); }); t.append(el('tr', null, el('td', { text: k }), td)); };
    const pre = (s) => el('pre', { text: s });
    row('type', D.types[g.type[v]]);
    if (S(g.what[v])) row('what', pre(S(g.what[v])));
    if (g.origin[v] >= 0) row('origin', pre(S(g.origin[v])));
    const ids = [];
    if (g.tools_id === null) ids.push('tools id ' + (g.exec_graph_id * 4294967296 + v), 'node id ' + v);
    else {
      if (g.tools_id[v] !== null) ids.push('tools id ' + g.tools_id[v]);
      ids.push('node id ' + g.node_id[v]);
    }
    if (g.exec_graph_id !== null) ids.push('exec graph ' + g.exec_graph_id);
    row('ids', ids.join(', '));
    const preds = el('span');
    g.deps[v].forEach((u, k) => { if (k) preds.append(', '); preds.append(u < g.nodes ? nodeLink(gi, u, String(u)) : String(u)); });
    row('after', g.deps[v].length ? preds : el('span', { class: 'muted', text: 'nothing (a root)' }));
    const outs = el('span');
    dependents(gi)[v].forEach((u, k) => { if (k) outs.append(', '); outs.append(nodeLink(gi, u, String(u))); });
    row('before', dependents(gi)[v].length ? outs : el('span', { class: 'muted', text: 'nothing (a leaf)' }));
    for (const e of g.edge_types) if (e[0] === v) row('edge', 'from ' + e[1] + ': ' + S(e[2]));
    if (g.repeat[v] >= 0) {
      const r = g.repeats[g.repeat[v]];
      row('repeat', 'copy ' + (g.copy[v] + 1) + ' of ' + r.count + ' x ' + (r.module_type || r.label) +
        (g.copy[v] > 0 ? ' (the picture draws copy 1 for it)' : ''));
    }
    if (p && !p.node_replays[v]) {
      // No record of the node: no times to show (the columns hold 0 for it).
      row('profile', el('span', { class: 'muted', text: 'no record of it in the trace: no times, no verdict' }));
    } else if (p) {
      const dmin = p.duration_min[v], dmax = p.duration_max[v];
      row('start', us(p.start[v]) + ' \u2192 end ' + us(p.end[v]) + ' (medians, from the replay\u2019s start)');
      // The median of the node's own durations (inside its range), not median end minus median start.
      row('duration', (p.duration[v] !== null ? us(p.duration[v]) + ' median' : us(p.end[v] - p.start[v])) +
        (dmin !== null ? '  (' + us(dmin) + ' .. ' + us(dmax) + ' over ' + p.node_replays[v] + ' replays)' : ''));
      row('ready', us(p.ready[v]));
      row('delay', us(p.delay[v]) + (p.blocking_node[v] ? ' (blocking: over ' + us(p.threshold_us) + ')' : ''));
      const verdict = ['none', 'real', 'fake'][p.verdict[v]] + (p.uncertain[v] ? ' ?' : '');
      row('verdict', el('span', { class: 'verdict-' + ['none', 'real', 'fake'][p.verdict[v]], text: verdict }),
        p.uncertain[v] ? el('span', { class: 'muted', text: ' (rests on an ambiguous assignment)' }) : null);
      if (p.observed[v] >= 0) row('waited for', nodeLink(gi, p.observed[v]));
      else if (p.observed_other[v] >= 0) row('waited for', S(p.observed_other[v]));
      if (p.blocker[v] >= 0) row('blocker', nodeLink(gi, p.blocker[v]), p.cause[v] >= 0 ? ' \u2014 ' + S(p.cause[v]) : '');
      if (p.lane[v] >= 0) row('lane', S(p.lane[v]) + (p.stream[v] >= 0 ? ', stream ' + p.stream[v] : ''));
      if (p.assignment[v] >= 0) row('assigned', S(p.assignment[v]));
      if (p.on_chain[v]) row('account', 'on the chain: work ' + nsus(p.work_ns[v]) + ', wait before it ' + nsus(p.wait_ns[v]) +
        (p.wait_ns[v] > 0 ? ' (mostly ' + D.categories[p.wait_category[v]].name + ')' : ''));
    } else if (g.profile_note) {
      row('profile', g.profile_note);
    }
    if (DIFF && gi < 2) {
      const first = t.children.length;  // the diff's rows go first: they are what the page is about
      const why = gi === 0 ? DIFF.a_why[v] : DIFF.b_why[v];
      row('diff', el('span', { class: 'gs-dword gs-dw' + diffMark(gi, v), text: DIFF_WORDS[gi][diffMark(gi, v)] }), why >= 0 ? ': ' + S(why) : '');
      const partner = diffPartner(gi, v);
      if (partner >= 0) row(gi === 0 ? 'in B' : 'in A', nodeLink(1 - gi, partner));
      // A folded shape draws several nodes: what they are, counted, as its colour says.
      if (nodes.length > 1) {
        const n = [0, 0, 0, 0];
        for (const u of nodes) ++n[diffMark(gi, u)];
        const parts = [];
        n.forEach((c, m) => { if (c) parts.push(c + ' ' + DIFF_WORDS[gi][m]); });
        row('drawn here', el('span', { class: 'gs-dcount', 'data-counts': n.join(',') }, nodes.length + ' nodes: ' + parts.join(', ')));
      }
      t.prepend(...[...t.children].slice(first));
    }
    box.append(t);
    if (nodes.length > 1) {
      box.append(el('div', { class: 'muted', text: nodes.length + ' nodes selected:' }));
      const l = el('div', { class: 'results' });
      nodes.slice(0, 400).forEach((u) => l.append(el('span', null, nodeLink(gi, u, u + ' ' + S(g.name[u])))));
      box.append(l);
    }
  }

  // ---- the makespan account
  function account(gi) {
    const p = G(gi).profile;
    const s = el('section', { id: 'gs-account' }, el('h2', { text: 'Where the makespan went' }));
    const a = p.account;
    if (!a.replays) { s.append(el('div', { class: 'muted', text: 'no replay to account for' })); return s; }
    s.append(el('div', null, 'replay ' + a.replay + ' (of median makespan, ' + a.replays + ' replays): ',
      el('b', { id: 'gs-makespan', 'data-ns': a.makespan_ns, text: nsus(a.makespan_ns) }),
      ' \u00b7 critical path ' + us(p.critical_path_us) + ' \u00b7 ' + p.real + ' real, ' + p.fake + ' fake (' + p.blocking + ' blocking) \u00b7 joined by ' + p.joined_by));
    const bar = el('div', { class: 'bar', id: 'gs-account-bar' });
    const t = el('table', { class: 'grid' });
    t.append(el('tr', null, el('th', { text: 'part' }), el('th', { class: 'num', text: 'this replay' }), el('th', { class: 'num', text: 'share' }),
      el('th', { class: 'num', text: 'median' }), el('th', { class: 'num', text: 'min .. max over replays' })));
    let sum = 0;
    for (const part of a.parts) {
      sum += part.ns;
      if (part.ns === 0 && part.max_us === 0) continue;
      const c = CAT_COLORS[part.category], name = D.categories[part.category].name;
      if (part.ns > 0) bar.append(el('div', { 'data-ns': part.ns, 'data-category': D.categories[part.category].key, title: name + ': ' + nsus(part.ns) + ' (' + pct(part.ns / a.makespan_ns) + ')',
        style: 'flex:' + part.ns + ' 0 0;background:' + c, onclick: () => pickCategory(gi, part.category) }));
      t.append(el('tr', { class: 'pick', onclick: () => pickCategory(gi, part.category) },
        el('td', null, el('span', { class: 'swatch', style: 'background:' + c }), name),
        el('td', { class: 'num', text: nsus(part.ns) }), el('td', { class: 'num', text: pct(part.ns / a.makespan_ns) }),
        el('td', { class: 'num', text: us(part.median_us) }), el('td', { class: 'num', text: us(part.min_us) + ' .. ' + us(part.max_us) })));
    }
    t.append(el('tr', null, el('th', { text: 'sum' }), el('th', { class: 'num', id: 'gs-account-sum', 'data-ns': sum, text: nsus(sum) }), el('th', { class: 'num', text: pct(sum / a.makespan_ns) }), el('th'), el('th')));
    s.append(bar);
    const right = el('div');
    if (a.modules.length) {
      const m = el('table', { class: 'grid' }, el('tr', null, el('th', { text: 'chain work by module' }), el('th', { class: 'num', text: 'time' })));
      for (const x of a.modules.slice(0, 12)) m.append(el('tr', null, el('td', { text: x.module || '(no module)' }), el('td', { class: 'num', text: nsus(x.ns) })));
      right.append(m);
    }
    if (p.what_if) {
      const w = p.what_if;
      const m = el('table', { class: 'grid' }, el('tr', null, el('th', { text: 'what-if (schedule model)' }), el('th', { class: 'num', text: 'makespan' })));
      m.append(el('tr', null, el('td', { text: 'measured (median)' }), el('td', { class: 'num', text: us(w.measured_us) })));
      m.append(el('tr', null, el('td', { text: 'the model, as measured' }), el('td', { class: 'num', text: us(w.as_measured_us) })));
      if (w.fitted_us !== undefined) m.append(el('tr', null, el('td', { text: 'the fitted model alone' }), el('td', { class: 'num', text: us(w.fitted_us) })));
      m.append(el('tr', null, el('td', { text: 'without fake dependencies' }), el('td', { class: 'num', text: us(w.without_fake_us) })));
      m.append(el('tr', null, el('td', { text: 'zero dependency latency' }), el('td', { class: 'num', text: us(w.zero_latency_us) })));
      right.append(m);
    }
    s.append(el('div', { class: 'twocol' }, t, right), findings(p));
    return s;
  }
  function findings(p) {  // what to try (analysis/findings.h), each with the numbers behind it, as the text report says it
    const box = el('div', { id: 'gs-findings' }, el('h3', { text: 'Findings: what to try' }));
    if (!p.findings || !p.findings.length) box.append(el('div', { class: 'muted', text: p.findings_note || 'none stand out' }));
    else box.append(el('ul', null, ...p.findings.map((f) => el('li', { 'data-kind': f.kind, 'data-share': f.share, text: f.text }))));
    return box;
  }
  function pickCategory(gi, c) {
    const p = G(gi).profile, g = G(gi), nodes = [];
    const workCat = { 0: [0], 1: [1], 2: [2], 3: [3] };
    for (let v = 0; v < g.nodes; ++v) {
      if (!p.on_chain[v]) continue;
      const work = p.work_ns[v] > 0 && ((workCat[c] && workCat[c].includes(g.type[v])) || (c === 4 && g.type[v] > 3));
      if (work || (p.wait_ns[v] > 0 && p.wait_category[v] === c)) nodes.push(v);
    }
    if (nodes.length) select(gi, nodes, nodes[0], true);
  }

  // ---- fake dependencies and worst delays
  function tables(gi) {
    const g = G(gi), p = g.profile;
    const s = el('section', { id: 'gs-tables' });
    const fake = [], all = [];
    for (let v = 0; v < g.nodes; ++v) { if (p.verdict[v] === 2) fake.push(v); all.push(v); }
    fake.sort((x, y) => p.delay[y] - p.delay[x]);
    const ft = el('table', { class: 'grid', id: 'gs-fake' });
    ft.append(el('tr', null, el('th', { text: 'node' }), el('th', { text: 'waited for' }), el('th', { text: 'cause' }), el('th', { class: 'num', text: 'delay' }), el('th', { text: 'lane' })));
    for (const v of fake.slice(0, 100))
      ft.append(el('tr', { class: 'pick', onclick: () => select(gi, [v], v, true) }, el('td', { text: v + ' ' + S(g.name[v]) + (p.uncertain[v] ? ' ?' : '') }),
        el('td', { text: p.observed[v] >= 0 ? p.observed[v] + ' ' + S(g.name[p.observed[v]]) : S(p.observed_other[v]) }),
        el('td', { text: S(p.cause[v]) }), el('td', { class: 'num', text: us(p.delay[v]) + (p.blocking_node[v] ? ' blocking' : '') }), el('td', { text: S(p.lane[v]) })));
    all.sort((x, y) => p.delay[y] - p.delay[x]);
    const wt = el('table', { class: 'grid', id: 'gs-delays' });
    wt.append(el('tr', null, el('th', { text: 'node' }), el('th', { class: 'num', text: 'delay' }), el('th', { text: 'verdict' }), el('th', { text: 'waited for' })));
    for (const v of all.slice(0, 15))
      wt.append(el('tr', { class: 'pick', onclick: () => select(gi, [v], v, true) }, el('td', { text: v + ' ' + S(g.name[v]) }),
        el('td', { class: 'num', text: us(p.delay[v]) }), el('td', { class: 'verdict-' + ['none', 'real', 'fake'][p.verdict[v]], text: ['none', 'real', 'fake'][p.verdict[v]] + (p.uncertain[v] ? ' ?' : '') }),
        el('td', { text: p.observed[v] >= 0 ? p.observed[v] + ' ' + S(g.name[p.observed[v]]) : S(p.observed_other[v]) })));
    s.append(el('div', { class: 'twocol' },
      el('div', null, el('h2', { text: 'Fake dependencies (' + fake.length + ')' }), fake.length ? ft : el('div', { class: 'muted', text: 'none: every observed wait is explained by the graph' })),
      el('div', null, el('h2', { text: 'Worst delays' }), wt)));
    return s;
  }

  // ---- one replay's timeline by lane, with the graph's edges
  function timeline(gi) {
    const g = G(gi), p = g.profile, tl = p.timeline;
    const s = el('section', { id: 'gs-timeline' }, el('h2', { text: 'Replay ' + tl.replay + ' by lane' }));
    if (!tl.items || !tl.items.length) { s.append(el('div', { class: 'muted', text: 'no records' })); return s; }
    if (!tl._rows) {  // flat columns to rows: [node, lane, start, end], [category, start, end, node]
      tl._rows = [];
      for (let k = 0; k + 3 < tl.items.length; k += 4) tl._rows.push([tl.items[k], tl.items[k + 1], tl.items[k + 2], tl.items[k + 2] + tl.items[k + 3]]);
      tl._segs = [];
      for (let k = 0; k + 3 < tl.segments.length; k += 4) tl._segs.push([tl.segments[k], tl.segments[k + 1], tl.segments[k + 1] + tl.segments[k + 2], tl.segments[k + 3]]);
    }
    const items = tl._rows;
    if (items.length > 5000 && !tl._asked) {
      s.append(el('button', { onclick: () => { tl._asked = true; s.replaceWith(timeline(gi)); },
        text: 'draw the timeline of ' + items.length + ' records (slow in a browser)' }));
      return s;
    }
    let end = p.account.makespan_ns;
    for (const x of items) end = Math.max(end, x[3]);
    const left = 150, rowH = 20, top = 34;
    const width = Math.max(window.innerWidth - left - 80, Math.min(6000, items.length * 6), 600);
    const H = top + tl.lanes.length * rowH + 24;
    const X = (ns) => left + (ns / end) * width;
    const svg = sv('svg', { width: left + width + 20, height: H });
    // The account as a track above the lanes.
    svg.append(Object.assign(sv('text', { x: 4, y: 20 }), { textContent: 'account' }));
    for (const sg of tl._segs) {
      const r = sv('rect', { x: X(sg[1]), y: 8, width: Math.max(0.5, X(sg[2]) - X(sg[1])), height: 16, fill: CAT_COLORS[sg[0]] });
      r.append(Object.assign(sv('title'), { textContent: D.categories[sg[0]].name + ' ' + nsus(sg[2] - sg[1]) + (sg[3] >= 0 ? ' (node ' + sg[3] + ')' : '') }));
      svg.append(r);
    }
    tl.lanes.forEach((l, k) => {
      svg.append(Object.assign(sv('text', { x: 4, y: top + k * rowH + 14 }), { textContent: l }));
      svg.append(sv('line', { x1: left, x2: left + width, y1: top + (k + 1) * rowH, y2: top + (k + 1) * rowH, stroke: '#eceff4' }));
    });
    const at = new Map();
    for (const it of items) if (it[0] >= 0) at.set(it[0], it);
    const edges = sv('g', { stroke: '#8893a6', 'stroke-width': 0.8, fill: 'none' });
    if (items.length <= 3000)
      for (const it of items) {
        if (it[0] < 0) continue;
        for (const u of g.deps[it[0]]) {
          const f = at.get(u);
          if (!f) continue;
          edges.append(sv('line', { x1: X(f[3]), y1: top + f[1] * rowH + 10, x2: X(it[2]), y2: top + it[1] * rowH + 10 }));
        }
      }
    svg.append(edges);
    const typeColor = ['#4a7fd4', '#d9822b', '#8c6bb1', '#3fa34d', '#999999'];
    for (const it of items) {
      const v = it[0];
      const fill = v < 0 ? '#bbbbbb' : p.verdict[v] === 2 ? '#d9534f' : typeColor[Math.min(g.type[v], 4)];
      const r = sv('rect', { class: 'item', x: X(it[2]), y: top + it[1] * rowH + 3, width: Math.max(1, X(it[3]) - X(it[2])), height: rowH - 6, fill, 'data-node': v });
      r.append(Object.assign(sv('title'), { textContent: (v >= 0 ? 'node ' + v + ' ' + S(g.name[v]) : 'a record with no node') + ': ' + nsus(it[2]) + ' .. ' + nsus(it[3]) }));
      if (v >= 0) r.addEventListener('click', () => select(gi, [v], v, true));
      svg.append(r);
    }
    for (let k = 0; k <= 10; ++k) {
      const x = X((end * k) / 10);
      svg.append(Object.assign(sv('text', { x: x - 10, y: H - 6 }), { textContent: nsus((end * k) / 10) }));
    }
    s.append(el('div', { class: 'timeline' }, svg));
    s.append(el('div', { class: 'muted', text: 'blue kernels, orange copies, purple memsets, red fake-delayed nodes; lines are the graph\u2019s edges; the top track is the account.' }));
    return s;
  }

  // ---- the legend of a profiled picture: the delay scale (D.delay_bands,
  // html_report.cc from delay_scale.h: multiples of the profile's threshold)
  // in microseconds, and every word the details and tables use.
  function delayBand(delay, threshold) {
    let b = 0;
    D.delay_bands.forEach((x, k) => { if (k > 0 && delay > 0 && delay >= x.from * threshold) b = k; });
    return b;
  }
  window.graphscopeDelayBand = delayBand;
  function profileLegend(gi) {
    const p = G(gi).profile, th = p.threshold_us, bands = D.delay_bands;
    const l = el('div', { class: 'legend', id: 'gs-legend', 'data-threshold-us': th });
    const scale = el('div', null, el('b', { text: 'Fill: ' }), 'the node\u2019s median delay (its start minus the moment it was ready), against this profile\u2019s threshold of ' + us(th) + ': ');
    bands.forEach((b, k) => {
      const lo = b.from * th, hi = k + 1 < bands.length ? bands[k + 1].from * th : null;
      const range = k === 0 ? 'under ' + us(hi) : hi === null ? us(lo) + ' and more' : us(lo) + ' to ' + us(hi);
      scale.append(el('span', { class: 'lg-band', 'data-band': k },
        el('span', { class: 'lg-sw', style: 'background:' + b.fill + ';color:' + b.text, text: 'Aa' }), ' ' + range + ' (' + b.words + ')'), ' ');
    });
    scale.append(el('span', { class: 'lg-band' }, el('span', { class: 'lg-sw', style: 'background:' + D.no_record_fill, text: 'Aa' }), ' no record of the node in the trace'));
    l.append(scale);
    const word = (w, cls, text) => el('span', { class: 'lg-word' }, el('b', { class: cls || '', text: w }), ' ' + text);
    l.append(el('div', null, el('b', { text: 'Verdicts: ' }),
      word('real', 'verdict-real', 'the node waited for a node the graph makes it wait for (a path in the graph);'), ' ',
      word('fake', 'verdict-fake', 'it came after work the graph does not order it after (e.g. independent branches on one channel);'), ' ',
      word('none', 'verdict-none', 'no observed dependency: nothing on its lane ended before it started;'), ' ',
      word('blocking', '', 'a fake dependency that held the node: delayed past the threshold behind work that is no ancestor; otherwise a fake one is ordering only;'), ' ',
      word('?', '', 'the verdict rests on an ambiguous assignment of records to nodes.')));
    l.append(el('div', { class: 'muted' }, el('b', { text: 'Other words: ' }),
      'cause: what a blocker shared with the node (same channel, copy engine, same stream, other); ' +
      '\u201cits lane was busy\u201d: other work still ran on its lane, the delay is dispatch, not a wait; ' +
      'assigned: how its records were found (id, unique, order, interchangeable, ambiguous); ' +
      'times in \u00b5s from the replay\u2019s first start, medians over replays.'));
    return l;
  }

  // ---- the page
  function graphSection(gi) {
    const g = G(gi);
    const wrap = el('div', { id: 'gs-graph' });
    const head = el('section');
    head.append(el('h2', { text: g.label + ' \u2014 ' + g.nodes + ' nodes, ' + g.edges + ' edges' + (g.total_nodes !== g.nodes ? ' (' + (g.total_nodes - g.nodes) + ' more in nested graphs)' : '') }));
    if (g.folding) head.append(el('div', { class: 'muted', text: 'folded: ' + g.folding }));
    head.append(toolbar());
    const panesDiv = el('div', { class: 'panes' });
    const view = el('div', { class: 'view', id: 'gs-view-0' });
    panesDiv.append(el('div', { class: 'pane' }, view));
    head.append(el('div', { class: 'workspace' }, panesDiv, el('aside', { id: 'details' }, el('div', { class: 'muted', text: 'Click a node, or search, to see its details.' }))));
    if (g.profile) head.append(profileLegend(gi));
    wrap.append(head);
    if (g.profile) { wrap.append(account(gi)); wrap.append(tables(gi)); wrap.append(timeline(gi)); }
    else if (g.profile_note) wrap.append(el('section', null, el('div', { class: 'note', text: 'no profile: ' + g.profile_note })));
    wrap.append(el('section', null, el('details', null, el('summary', { text: 'summary (as graphscope dump prints it)' }), el('pre', { class: 'pre', text: g.summary }))));
    return { wrap, view };
  }
  function toolbar() {
    const tb = el('div', { class: 'toolbar' });
    const input = el('input', { id: 'gs-search', type: 'search', placeholder: 'search kernel, module or source (Enter)' });
    let timer = null;
    input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => search(input.value), 200); });
    input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { clearTimeout(timer); search(input.value); } });
    tb.append(input, el('span', { class: 'count', id: 'gs-match-count' }));
    tb.append(el('button', { onclick: () => panes.forEach(fit), text: 'fit' }));
    tb.append(el('button', { onclick: () => panes.forEach((p) => zoomAt(p, 0.7, 0.5, 0.5)), text: 'zoom in' }));
    tb.append(el('button', { onclick: () => panes.forEach((p) => zoomAt(p, 1 / 0.7, 0.5, 0.5)), text: 'zoom out' }));
    tb.append(el('button', { onclick: () => panes.forEach((p) => p.svg && setView(p, p.full.x, p.full.y, p.full.w, p.full.h)), text: 'whole graph' }));
    return el('div', null, tb, el('div', { class: 'results', id: 'gs-results' }));
  }
  let body = null;
  function showGraph(gi) {
    state.graph = gi;
    panes.length = 0;
    const picker = document.getElementById('gs-picker');
    if (picker) for (const b of picker.querySelectorAll('button')) b.classList.toggle('on', +b.dataset.graph === gi);
    const { wrap, view } = graphSection(gi);
    if (RUN) { const n = RUN.sharedNote(gi); if (n) wrap.firstChild.insertBefore(n, wrap.firstChild.children[1]); }
    body.replaceChildren(wrap);
    mountPicture(view, gi, 0);
  }
  // ---- the diff: what each node is (DIFF.a_mark, b_mark: 0 the same, 1 only
  // on its side, 2 changed, 3 an edge of it changed), and what a shape that
  // draws several nodes (a folded repeat's copies) is: its class, its
  // colour, follows all of them.
  const DIFF_WORDS = [['the same in both', 'only in A (removed)', 'changed', 'an edge changed'],
                      ['the same in both', 'only in B (inserted)', 'changed', 'an edge changed']];
  const diffMark = (gi, v) => (gi === 0 ? DIFF.a_mark[v] : DIFF.b_mark[v]) || 0;
  function diffPartner(gi, v) {
    if (gi === 0) return DIFF.a_to_b[v];
    if (!DIFF._b_to_a) {
      DIFF._b_to_a = new Array(G(1).nodes).fill(-1);
      DIFF.a_to_b.forEach((b, a) => { if (b >= 0) DIFF._b_to_a[b] = a; });
    }
    return DIFF._b_to_a[v];
  }
  function shapeDiffClass(gi, nodes) {
    const n = [0, 0, 0, 0];
    for (const v of nodes) ++n[diffMark(gi, v)];
    if (n[1] && n[1] === nodes.length) return 'gs-d1';  // all only on this side
    if (n[1]) return 'gs-dp';                          // some copies only on this side, some matched
    if (n[2]) return 'gs-d2';
    if (n[3]) return 'gs-d3';
    return '';
  }
  window.graphscopeShapeDiffClass = shapeDiffClass;  // the browser test compares it with the document's
  function swatch(cls, title) { return el('span', { class: 'lg-sw ' + cls, title: title || '' }); }
  function diffLegend() {
    const l = el('div', { class: 'legend', id: 'gs-legend' });
    l.append(el('div', null, el('b', { text: 'Colours ' }),
      swatch('lg-same'), 'the same in both (a matched node, nothing changed) \u00b7 ',
      swatch('lg-removed'), 'removed: only in A \u00b7 ', swatch('lg-inserted'), 'inserted: only in B \u00b7 ',
      swatch('lg-changed'), 'changed: matched, an attribute differs (grid, size, ...) \u00b7 ',
      swatch('lg-edge'), 'an edge changed: matched, an edge of it is only on one side or changed type \u00b7 ',
      swatch('lg-partly-a'), swatch('lg-partly-b'), 'partly: a folded shape whose nodes are matched in some copies and only on its side in others (its details count them)'));
    l.append(el('div', { class: 'muted', text: 'A shape of a folded picture draws every copy of its repeat: its colour is that of all the nodes it draws, and clicking it lists them. ' +
      'Edges of one side that the other runs through inserted (or removed) nodes are where those were put in (taken out), not edges removed.' }));
    return l;
  }

  // What a side's folded picture draws as one (its title says it too, above its first node).
  const paneFolding = (gi) => el('div', { class: 'panehead muted', title: G(gi).folding || '', text: G(gi).folding ? 'folded: ' + G(gi).folding : 'nothing folded' });
  function diffPage() {
    const wrap = el('div');
    const s = el('section');
    s.append(el('h2', { text: DIFF.same ? 'The two graphs are the same' : 'The graphs differ' }));
    s.append(diffLegend());
    s.append(toolbar());
    const pa = el('div', { class: 'view side-a', id: 'gs-view-0' }), pb = el('div', { class: 'view side-b', id: 'gs-view-1' });
    const ps = el('div', { class: 'panes' },
      el('div', { class: 'pane' }, el('div', { class: 'panehead', text: G(0).label + ' (' + G(0).nodes + ' nodes)' }), paneFolding(0), pa),
      el('div', { class: 'pane' }, el('div', { class: 'panehead', text: G(1).label + ' (' + G(1).nodes + ' nodes)' }), paneFolding(1), pb));
    s.append(el('div', { class: 'workspace' }, ps, el('aside', { id: 'details' }, el('div', { class: 'muted', text: 'Click a node to see its details.' }))));
    wrap.append(s);
    wrap.append(el('section', null, el('h2', { text: 'The difference' }), el('pre', { class: 'pre', id: 'gs-diff-text', text: DIFF.text })));
    body.replaceChildren(wrap);
    const a = mountPicture(pa, 0, 0), b = mountPicture(pb, 1, 1);
    for (const pane of [a, b]) {
      if (!pane.svg) continue;
      const byShape = shapeNodes(pane.gi);
      for (const [name, e] of pane.shapes) {
        const cls = shapeDiffClass(pane.gi, byShape.get(name) || []);
        if (cls) e.classList.add(cls);
      }
    }
  }
  function main() {
    app.textContent = '';
    app.append(header());
    if (LEDGER) app.append(LEDGER.section());
    if (D.ranks) app.append(RUN.ranksSection());
    if (RUN) app.append(RUN.runIndex());
    if (!DIFF && D.graphs.length > 1) {
      if (RUN) app.append(RUN.picker());
      else {
        const pick = el('section', { id: 'gs-picker' }, el('h2', { text: 'Graphs' }));
        const row = el('div', { class: 'graphpick' });
        D.graphs.forEach((g, gi) => row.append(el('button', { 'data-graph': gi, onclick: () => showGraph(gi), text: g.label + ' (' + g.nodes + ')' })));
        pick.append(row);
        app.append(pick);
      }
    }
    body = el('div', { id: 'gs-body' });
    app.append(body);
    if (DIFF) diffPage();
    else if (D.graphs.length) showGraph(0);
    else body.append(el('section', null, el('div', { class: 'muted', text: 'no graph was dumped' })));
    // Ready once the first frame with everything drawn has been laid out and
    // painted: the time a person waits, from navigation start.
    requestAnimationFrame(() => setTimeout(() => {
      document.body.dataset.drawnMs = Math.round(performance.now());
      document.body.dataset.ready = '1';
    }, 0));
  }
  main();
})();
