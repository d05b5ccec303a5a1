// graphscope report: the run's ledger, the first section of an --exec run's
// page (embedded with report_run.js and report.js, before them). It draws
// D.ledger, the graphscope.ledger/1 document of `graphscope ledger --json`,
// as it is: every number shown is one of the document's, written with the
// rounding `graphscope ledger` prints (ledger_text.cc); a key the document
// lacks (older recordings) leaves its column or line out. Kernel names are
// shown by D.ledger_names (recorded -> shown, made where they can be
// demangled). report.js calls it once with the helpers it shares.
// eslint-disable-next-line no-unused-vars
function graphscopeLedgerPage(h) {
  'use strict';
  const { D, el, sv, showGraph, select } = h;
  const L = D.ledger;
  const NAMES = D.ledger_names || {};
  const has = (x, k) => x !== null && x !== undefined && x[k] !== undefined && x[k] !== null;

  // ---- numbers as `graphscope ledger` prints them
  function usText(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(2) + ' s';
    if (v >= 1000) return (v / 1000).toFixed(2) + ' ms';
    return v.toFixed(1) + ' \u00b5s';
  }
  const msText = (v) => usText(v * 1000);
  function bytesText(b) {
    if (b >= 2 ** 30) return (b / 2 ** 30).toFixed(1) + ' GiB';
    if (b >= 2 ** 20) return (b / 2 ** 20).toFixed(1) + ' MiB';
    if (b >= 1024) return (b / 1024).toFixed(1) + ' KiB';
    return b + ' B';
  }
  const percent = (share) => (share * 100).toFixed(0) + '%';
  const seconds = (t) => t.toFixed(2) + ' s';  // an instant, as the torch.compile lines say it
  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);
  const graphName = (g) => 'exec graph ' + g.exec_graph_id + (g.version > 1 ? ' v' + g.version : '');
  const shownName = (e) => (e.kind === undefined || e.kind === 'kernel' ? NAMES[e.name] || e.name : e.name);
  function processName(p) {
    return (has(p, 'rank') ? 'rank ' + p.rank + ' (pid ' + p.pid + ')' : 'pid ' + p.pid);
  }
  const runsOf = (g) => (has(g, 'launches') ? g.launches : has(g, 'replays') ? g.replays : undefined);

  // A cell with one number of the document: its text, and the value itself
  // (data-key, data-value) for whoever checks the page against the document.
  function num(x, key, text) {
    const v = has(x, key) ? x[key] : null;
    return el('td', { class: 'num', 'data-key': key, 'data-value': v === null ? '' : String(v),
      text: v === null ? '-' : text ? text(v) : String(v) });
  }
  const line = (text, cls) => el('div', { class: cls || 'gs-ledger-line', text });

  // The page's section of ledger process k's graph i (the ledger lists a
  // process's graphs in its index's order, as the page does), or -1.
  function pageGraph(k, i) {
    const dir = L.processes[k].dir;
    const rp = D.run ? D.run.processes.find((q) => q.dir === dir) : null;
    return rp && i < rp.graphs.length ? rp.graphs[i] : -1;
  }
  function openGraph(gi, node) {
    showGraph(gi);
    if (node !== undefined) select(gi, [node], node, true);
    document.getElementById('gs-graph').scrollIntoView();
  }
  function graphLink(k, i, text) {
    const gi = pageGraph(k, i);
    if (gi < 0) return el('span', { text });
    return el('span', { class: 'link', 'data-graph': gi, title: 'show it on this page', onclick: () => openGraph(gi) }, text);
  }

  // ---- a process's graphs, one a row
  function graphTable(p, k) {
    const gs = p.graphs;
    const any = (key) => gs.some((g) => has(g, key));
    const est = gs.some((g) => has(g, 'replay_gpu_us') && g.replay_gpu_from !== 'records');
    // Columns: those every ledger has, and those of costs only some indexes
    // record, where some graph of the process has them.
    const cols = [
      ['nodes', 'nodes of its root graph', (g) => num(g, 'nodes')],
      ['graph memory', 'bytes its memory alloc nodes allocate', (g) => num(g, 'alloc_bytes', (v) => (v ? bytesText(v) : '-'))],
      any('capture_alloc_bytes') && ['pool', 'device memory the driver allocated while the graph was captured (PyTorch\u2019s pool)',
        (g) => num(g, 'capture_alloc_bytes', bytesText)],
      any('capture_ms') && ['capture', 'stream capture, wall time', (g) => num(g, 'capture_ms', msText)],
      any('instantiate_ms') && ['instantiate', 'cudaGraphInstantiate, wall time', (g) => num(g, 'instantiate_ms', msText)],
      any('upload_ms') && ['upload', 'cudaGraphUpload calls, wall time', (g) => num(g, 'upload_ms', msText)],
      ['launches', 'launches the run counted', (g) => num(g, 'launches')],
      any('makespan_us') && ['median replay', 'makespan, the median over the replays profiled', (g) => num(g, 'makespan_us', usText)],
      ['GPU time in replays', est ? '~: launches x the median makespan of the replays profiled' : 'the union of its replays\u2019 records',
        (g) => num(g, 'replay_gpu_us', (v) => (g.replay_gpu_from === 'records' ? '' : '~') + usText(v))],
      any('created_s') && ['made', 'when its instantiation ended, seconds after attach', (g) => num(g, 'created_s', seconds)],
      (any('first_launch_s') || any('replayed')) && ['replayed', 'first-last replay, seconds after attach', replayedCell],
    ].filter(Boolean);
    const t = el('table', { class: 'grid gs-ledger-graphs', id: 'gs-ledger-graphs-' + k });
    const head = el('tr', null, el('th', { text: 'graph' }));
    for (const [name, title] of cols) head.append(el('th', { class: 'num', title, text: name }));
    head.append(el('th', { text: 'captured at' }));
    t.append(head);
    gs.forEach((g, i) => {
      const row = el('tr', { 'data-graph': pageGraph(k, i), 'data-exec-graph': g.exec_graph_id, 'data-version': g.version },
        el('td', { class: 'gs-ledger-name' }, graphLink(k, i, graphName(g))));
      for (const c of cols) row.append(c[2](g));
      row.append(el('td', { class: 'gs-ledger-site', text: g.site || '(no origin)' }));
      t.append(row);
    });
    const wrap = el('div', { class: 'gs-ledger-wide' }, t);
    if (est) wrap.append(line('GPU time in replays: ~ launches x the median makespan of the replays profiled', 'muted'));
    return wrap;
  }
  function replayedCell(g) {
    let text = '-';
    if (has(g, 'first_launch_s') && has(g, 'last_launch_s')) text = g.first_launch_s.toFixed(1) + '-' + g.last_launch_s.toFixed(1) + ' s';
    else if (has(g, 'replayed')) text = g.replayed ? 'yes' : 'never';
    const td = el('td', { class: 'num', 'data-key': 'first_launch_s', 'data-value': has(g, 'first_launch_s') ? String(g.first_launch_s) : '', text });
    if (g.replayed === false) td.classList.add('gs-never');
    return td;
  }

  // ---- costs together, as the text says them
  function costs(p) {
    const c = p.costs || {};
    const box = el('div', { class: 'gs-ledger-costs' });
    const cost = [];
    if (has(c, 'capture_ms')) cost.push('capture ' + msText(c.capture_ms));
    if (has(c, 'instantiate_ms')) cost.push('instantiate ' + msText(c.instantiate_ms));
    if (c.uploads) cost.push('upload ' + msText(c.upload_ms) + ' (' + plural(c.uploads, 'call', 'calls') + ')');
    if (cost.length) box.append(el('div', null, el('b', { text: 'cost: ' }), cost.join(', ')));
    const mem = [];
    if (has(c, 'capture_alloc_bytes')) mem.push(bytesText(c.capture_alloc_bytes) + ' allocated while capturing');
    if (c.alloc_bytes) mem.push(bytesText(c.alloc_bytes) + ' in memory alloc nodes');
    if (has(c, 'graph_mem_reserved_high') || has(c, 'graph_mem_used_high'))
      mem.push('graph memory high-water ' + bytesText(c.graph_mem_reserved_high || 0) + ' reserved, ' + bytesText(c.graph_mem_used_high || 0) + ' used');
    if (mem.length) box.append(el('div', null, el('b', { text: 'memory: ' }), mem.join('; ')));
    if (p.launches_missed) box.append(line('launches: some may not be counted (' + p.launches_missed + ')', 'note'));
    return box;
  }

  // What changed between two captures or versions, as the text says it.
  function changedText(r) {
    const parts = [];
    if (r.added) parts.push(plural(r.added, 'node', 'nodes') + ' more');
    if (r.removed) parts.push(plural(r.removed, 'node', 'nodes') + ' fewer');
    for (const c of r.changes.slice(0, 3)) parts.push(c.nodes + (c.nodes === 1 ? ' node\u2019s ' : ' nodes\u2019 ') + c.field + ' ' + c.before + ' \u2192 ' + c.after);
    if (r.changes.length > 3) parts.push((r.changes.length - 3) + ' more');
    if (r.moved_addresses) parts.push('addresses in ' + plural(r.moved_addresses, 'kernel argument', 'kernel arguments') + ' of ' + plural(r.moved_address_nodes, 'node', 'nodes') + ' moved');
    if (parts.length) return parts.join(', ');
    return r.args_compared ? 'nothing diff compares changed (kernel arguments included)' : 'nothing diff compares changed (the documents record no kernel arguments)';
  }
  // Exec graphs changed after instantiation.
  function updates(p, k) {
    const box = el('div', { class: 'gs-ledger-updates' }, el('div', { class: 'gs-ledger-sub', text: 'exec graphs changed after instantiation' }));
    for (const u of p.updates || []) {
      box.append(el('div', { class: 'gs-ledger-line gs-ledger-update' }, graphLink(k, u.graph, graphName(p.graphs[u.graph])),
        (u.updated_by.length ? ' (' + u.updated_by.join(', ') + ')' : '') + ' against ', graphLink(k, u.previous, graphName(p.graphs[u.previous])), ': ' + changedText(u)));
      for (const n of u.not_recorded || []) box.append(line('not recorded: ' + n, 'note'));
    }
    for (const x of p.unchanged_updates || [])
      box.append(line('exec graph ' + x.exec_graph_id + ': ' + plural(x.calls, 'update call', 'update calls') + ' changed nothing recorded', 'muted'));
    for (const x of p.updates_not_recorded || [])
      box.append(line('exec graph ' + x.exec_graph_id + ': ' + plural(x.calls, 'update call', 'update calls') + ' after its last recorded version, not recorded', 'muted'));
    return box;
  }

  // Updates the driver refused, and replays that touched memory freed since their capture.
  function why(p, k) {
    const box = el('div', { class: 'gs-ledger-why' });
    const byId = (id) => p.graphs.findIndex((g) => g.exec_graph_id === id);
    if (p.update_failures && p.update_failures.length) {
      box.append(el('div', { class: 'gs-ledger-sub', text: 'updates the driver refused' }));
      for (const u of p.update_failures) {
        const gi = u.exec_graph_id === null ? -1 : byId(u.exec_graph_id);
        const d = el('div', { class: 'gs-ledger-line gs-ledger-refused' },
          gi >= 0 ? graphLink(k, gi, 'exec graph ' + u.exec_graph_id) : 'an exec graph',
          ': ' + u.call + ' failed with ' + u.error + (u.result ? ' (' + u.result + ')' : '') +
          (u.from_node_text ? ', at its ' + u.from_node_text : '') + (u.node_text ? ', the offered graph\u2019s node ' + u.node_text : '') +
          (!u.from_node_text && !u.node_text && u.result ? '; the driver named no node' : '') + (u.count > 1 ? ', ' + u.count + ' times' : ''));
        box.append(d);
      }
    }
    const l = p.liveness;
    if (l) {
      box.append(el('div', { class: 'gs-ledger-sub', text: 'input liveness (--liveness=' + l.mode + ')' }));
      box.append(line(plural(l.watched, 'address', 'addresses') + ' watched in the graphs\u2019 arguments and copies' +
        (l.torch ? ', PyTorch\u2019s caching allocator watched' : '') + '; ' +
        (l.findings.length ? plural(l.findings.length, 'finding', 'findings') : 'no replay touched memory freed since its capture'), l.findings.length ? '' : 'muted'));
      for (const f of l.findings) {
        const gi = byId(f.exec_graph_id);
        const d = el('div', { class: 'gs-ledger-line gs-ledger-finding' }, el('b', { text: 'replay ' + f.first_replay }), ' of ',
          gi >= 0 ? graphLink(k, gi, 'exec graph ' + f.exec_graph_id) : 'exec graph ' + f.exec_graph_id,
          ' ' + f.uses + ' memory freed' + (f.freed_at ? ' at ' + f.freed_at : '') + ' (');
        const pg = gi >= 0 ? pageGraph(k, gi) : -1;
        d.append(pg >= 0 ? el('span', { class: 'link', title: 'show the node on this page', onclick: () => openGraph(pg, f.node) }, f.node_text) : f.node_text);
        d.append(', argument ' + f.arg + (f.offset ? ' at byte ' + f.offset : '') + ', address 0x' + f.address.toString(16) +
          (f.allocated_at ? '; allocated at ' + f.allocated_at : '') + (f.reused ? '; handed out again' + (f.reused_at ? ' at ' + f.reused_at : '') : '') +
          '): ' + plural(f.replays, 'launch', 'launches') + ' since the free' + (f.refused ? ', ' + f.refused + ' refused' : ''));
        box.append(d);
      }
      if (l.unreplayed) box.append(line(plural(l.unreplayed, 'allocation', 'allocations') + ' a graph holds ' + (l.unreplayed === 1 ? 'was' : 'were') + ' freed while it lived, the graph not launched after: no harm done', 'muted'));
      for (const n of l.notes || []) box.append(line('note: ' + n, 'note'));
    }
    return box;
  }

  // ---- families: graphs captured at one place (a serving engine's buckets)
  function family(p, k, f, fi) {
    const gs = p.graphs;
    const counted = f.graphs.every((i) => runsOf(gs[i]) !== undefined);
    const box = el('div', { class: 'gs-ledger-family', id: 'gs-ledger-family-' + k + '-' + fi });
    box.append(el('div', null, el('b', { text: 'family at ' }), el('span', { class: 'gs-ledger-site-inline', text: f.site }),
      ': ' + plural(f.graphs.length, 'graph', 'graphs') + ' (buckets)' + (counted ? ', runs per bucket:' : ':')));
    const chips = el('div', { class: 'gs-ledger-chips' });
    for (const i of f.graphs) {
      const g = gs[i], runs = runsOf(g);
      const chip = el('span', { class: 'gs-chip' + (g.replayed === false ? ' gs-never' : ''), 'data-runs': runs === undefined ? '' : runs },
        graphLink(k, i, graphName(g)));
      if (counted) chip.append(' \u00d7' + runs);
      chips.append(chip);
    }
    box.append(chips);
    if (f.bucket_kernel)
      box.append(line('bucket sizes as the graphs show them (blocks of ' + shownName({ kind: 'kernel', name: f.bucket_kernel }) + '): ' +
        f.graphs.map((i, j) => graphName(gs[i]) + ' ' + f.bucket_blocks[j]).join(', '), 'muted'));
    for (const r of f.recaptures || []) {
      box.append(el('div', { class: 'gs-ledger-line gs-ledger-recapture' }, graphLink(k, r.graph, graphName(gs[r.graph])), ' is ',
        graphLink(k, r.previous, graphName(gs[r.previous])), ' captured again: ' + changedText(r)));
    }
    if (f.uncaptured && f.uncaptured.length)
      box.append(el('div', { class: 'gs-ledger-line gs-ledger-uncaptured' }, 'ran eager after the captures at sizes no bucket was captured for (its blocks, launches): ' +
        f.uncaptured.map((x) => x.blocks + ' (\u00d7' + x.launches + ')').join(', ')));
    for (const i of f.never_replayed || []) {
      const g = gs[i];
      let cost = has(g, 'capture_ms') ? msText(g.capture_ms) + ' of capture' : 'capture time not recorded';
      if (has(g, 'capture_alloc_bytes') || g.alloc_bytes) cost += ', ' + bytesText(g.alloc_bytes + (g.capture_alloc_bytes || 0));
      box.append(el('div', { class: 'gs-ledger-line gs-never' }, 'bucket ', graphLink(k, i, graphName(g)), ' never replayed: ' + cost));
    }
    if ((f.never_replayed || []).length > 1)
      box.append(line('never replayed together: ' + msText(f.never_replayed_capture_ms) + ' of capture, ' + bytesText(f.never_replayed_bytes)));
    for (const i of f.identical || [])
      box.append(el('div', { class: 'gs-ledger-line' }, 'bucket ', graphLink(k, i, graphName(gs[i])), ' is identical to ',
        graphLink(k, gs[i].identical_to, graphName(gs[gs[i].identical_to])), ': one executable graph would have done'));
    if (f.fallback) box.append(fallback(p, k, f));
    return box;
  }
  function fallback(p, k, f) {
    const b = f.fallback, gs = p.graphs;
    const box = el('div', { class: 'gs-ledger-fallback' });
    box.append(el('div', { class: 'verdict-fake', text: b.runs ? 'fallback: the family ran eager about ' + b.runs + ' times after its graphs were captured'
      : 'outside its graphs: the family\u2019s code launched work eager after its graphs were captured (not a whole run of their kernels)' }));
    if (b.runs)
      box.append(line('(median over ' + plural(b.kernels.length, 'kernel', 'kernels') + ' every member has' +
        (b.at_other_geometry ? '; ' + b.at_other_geometry + ' at geometries no member has' : '') + ')', 'muted'));
    for (const x of b.from || [])
      box.append(el('div', { class: 'gs-ledger-line gs-ledger-from' }, 'from ',
        el('span', { class: 'gs-ledger-site-inline', text: x.call || 'the family\u2019s own code' }),
        ': ' + plural(x.launches_after_captures, 'eager launch', 'eager launches') + ' after the captures, ' + usText(x.gpu_us) + ' of GPU time'));
    for (const m of b.by_member)
      box.append(el('div', { class: 'gs-ledger-line' }, 'about ' + m.runs + ' at a geometry bucket ', graphLink(k, m.graph, graphName(gs[m.graph])),
        ' has: the graph could have run'));
    if (!b.by_member.length && b.at_member_geometry) box.append(line('about ' + b.at_member_geometry + ' at geometries members have'));
    if (b.kernels.length) {
      const t = el('table', { class: 'grid' });
      t.append(el('tr', null, el('th', { text: 'kernel every member has' }), el('th', { class: 'num', text: 'nodes per graph' }),
        el('th', { class: 'num', text: 'eager after captures' }), el('th', { class: 'num', text: 'at a member\u2019s geometry' }),
        el('th', { class: 'num', text: 'at another' }), el('th', { text: 'tells buckets apart' })));
      for (const x of b.kernels)
        t.append(el('tr', null, el('td', { class: 'gs-ledger-kernel', title: x.name, text: shownName(x) }), num(x, 'per_graph'), num(x, 'eager'),
          num(x, 'at_member_geometry'), num(x, 'at_other_geometry'), el('td', { text: x.tells_apart ? 'yes' : 'no' })));
      box.append(el('details', null, el('summary', { text: 'the kernels it was counted by (' + b.kernels.length + ')' }), el('div', { class: 'gs-ledger-wide' }, t)));
    }
    return box;
  }

  // ---- GPU work outside graphs
  function work(p, k) {
    const w = p.work;
    const box = el('div', { class: 'gs-ledger-work', id: 'gs-ledger-work-' + k },
      el('div', { class: 'gs-ledger-sub', text: 'GPU work in and outside graphs' }));
    const head = el('div', { class: 'gs-ledger-share' });
    if (has(w, 'in_graph_share'))
      head.append(el('b', { class: 'gs-ledger-big', 'data-value': String(w.in_graph_share), text: 'in graphs ' + percent(w.in_graph_share) }),
        ' of GPU busy time (' + usText(w.graph_us) + '); ');
    head.append('eager ' + usText(w.eager_us) + ', busy ' + usText(w.busy_us) + ' \u00b7 ' + w.source + ', ' +
      w.start_s.toFixed(1) + '-' + w.end_s.toFixed(1) + ' s after attach');
    box.append(head);
    if (has(w, 'captures_end_s')) box.append(line('the last graph was made at ' + w.captures_end_s.toFixed(1) + ' s', 'muted'));
    if (w.misstamped_records)
      box.append(line(plural(w.misstamped_records, 'eager record', 'eager records') + ' CUPTI stamped to end after the next work on their stream began (they claimed ' +
        usText(w.misstamped_us) + '): launches counted, durations left out', 'note'));
    if (w.timeline && w.timeline.length) box.append(timeline(w, k));
    if (w.top && w.top.length) box.append(eagerTable(p, k, w));
    if (w.sites) box.append(siteTable(p, k, w));
    return box;
  }
  // Eager work by where it was launched (the launch sites the run read).
  function siteTable(p, k, w) {
    const t = el('table', { class: 'grid', id: 'gs-ledger-sites-' + k });
    t.append(el('tr', null, el('th', { class: 'num', text: 'GPU time' }), el('th', { class: 'num', text: 'launches' }),
      el('th', { class: 'num', title: 'launches that started after the process last made a graph', text: 'after captures' }),
      el('th', { text: 'where' }), el('th', { text: 'largest kernel or copy' })));
    for (const x of w.sites) {
      const where = el('td', { class: 'gs-ledger-where' }, el('span', { class: 'gs-ledger-site-inline', text: x.where || '(unknown)' }));
      if (x.module) where.append(' (' + x.module + ')');
      if (x.callers && x.callers.length) where.append(el('div', { class: 'muted', text: '\u2190 ' + x.callers.join(' \u2190 ') }));
      if (x.family !== undefined && p.families[x.family])
        where.append(el('div', { class: 'note', text: 'the code of the family at ' + p.families[x.family].site }));
      t.append(el('tr', { class: 'gs-site-row' }, num(x, 'gpu_us', usText), num(x, 'launches'),
        has(w, 'captures_end_s') ? num(x, 'launches_after_captures') : el('td', { class: 'num', text: '-' }), where,
        el('td', { class: 'gs-ledger-kernel', title: x.top || '', text: x.top ? shownName({ kind: 'kernel', name: x.top }) : '' })));
    }
    if (w.sites_rest_launches)
      t.append(el('tr', null, num(w, 'sites_rest_us', usText), num(w, 'sites_rest_launches'), el('td'), el('td', { class: 'muted', text: '(the rest)' }), el('td')));
    if (w.unsited_launches)
      t.append(el('tr', null, num(w, 'unsited_us', usText), num(w, 'unsited_launches'), el('td'), el('td', { class: 'muted', text: '(no place read for the launch)' }), el('td')));
    return el('div', { class: 'gs-ledger-wide' }, el('div', { class: 'gs-ledger-sub', text: 'eager work by origin (where each launch was made)' }), t);
  }
  function eagerTable(p, k, w) {
    const t = el('table', { class: 'grid', id: 'gs-ledger-eager-' + k });
    t.append(el('tr', null, el('th', { class: 'num', text: 'GPU time' }), el('th', { class: 'num', text: 'launches' }),
      el('th', { class: 'num', title: 'launches that started after the process last made a graph', text: 'after captures' }),
      el('th', { text: 'kind' }), el('th', { text: 'name' })));
    // The largest ten, as the text lists them; the others of the document's
    // top on request (its rest is the document's own, never summed here).
    const FIRST = 10, more = [];
    for (const e of w.top) {
      const name = el('td', { class: 'gs-ledger-kernel' }, el('span', { title: e.name, text: shownName(e) }));
      const n = e.graph_node;
      if (n) {
        const gi = pageGraph(k, n.graph), what = 'kernel of ' + graphName(p.graphs[n.graph]) + ' node ' + n.node;
        name.append(el('div', { class: 'muted' }, '(the ', gi < 0 ? what :
          el('span', { class: 'link', 'data-graph': gi, 'data-node': n.node, onclick: () => openGraph(gi, n.node), text: what }), ': ' + n.origin + ')'));
      }
      const row = el('tr', { class: 'gs-eager-row', 'data-kind': e.kind }, num(e, 'gpu_us', usText), num(e, 'launches'),
        has(w, 'captures_end_s') ? num(e, 'launches_after_captures') : el('td', { class: 'num', text: '-' }), el('td', { text: e.kind }), name);
      if (t.children.length > FIRST) { row.hidden = true; more.push(row); }  // the header is a child too
      // More than the GPU was busy in all: its records overlap one another,
      // or CUPTI stamped some wrong (as the text flags it).
      if (e.gpu_us > w.busy_us)
        name.append(el('div', { class: 'note', text: 'its durations add up to more than the GPU was busy: overlapping or misstamped' }));
      t.append(row);
    }
    // The button in the table, above the rest: the rest is the document's,
    // past all of its top, not past the rows shown first.
    if (more.length) {
      const show = el('button', { class: 'gs-ledger-more', text: 'the next ' + more.length + ' of the largest',
        onclick: () => { more.forEach((r) => { r.hidden = false; }); showRow.remove(); } });
      const showRow = el('tr', null, el('td', { colspan: 5 }, show));
      t.append(showRow);
    }
    if (w.rest_launches)
      t.append(el('tr', { class: 'gs-eager-rest' }, num(w, 'rest_us', usText), num(w, 'rest_launches'), el('td'), el('td'), el('td', { class: 'muted', text: '(the rest)' })));
    return el('div', { class: 'gs-ledger-wide' }, el('div', { class: 'gs-ledger-sub', text: 'eager work by GPU time (launched outside any graph)' }), t);
  }

  // The timeline: per bin, the share of its time the GPU was busy in graph
  // replays and outside them, and idle, as stacked bars on an axis of
  // seconds after attach. The shares are those `graphscope ledger` prints
  // (each bin's busy time over the bin's span; the last bin ends at end_s).
  const COLORS = { graph: '#2f6fd0', eager: '#f0a030', idle: '#e3e7ee' };
  function timeline(w, k) {
    const bins = w.timeline, n = bins.length;
    // Time runs left to right from the first record to the last: every bin
    // is bin_s wide but the last, which ends at end_s. About 28 px a bin,
    // thinner where there are many, never wider than the page.
    const avail = Math.max(320, Math.min(1100, (window.innerWidth || 1200) - 140));
    const plotW = Math.min(avail, Math.max(240, n * 28));
    const left = 44, top = 8, plotH = 120, width = left + plotW + 24, height = top + plotH + 38;
    const t0 = w.start_s, t1 = Math.max(w.end_s, w.start_s + 1e-9);
    const xOf = (t) => left + ((Math.min(t, t1) - t0) / (t1 - t0)) * plotW;
    const s = sv('svg', { width, height, viewBox: '0 0 ' + width + ' ' + height, role: 'img', id: 'gs-ledger-timeline-' + k,
      'aria-label': 'GPU time per ' + w.bin_s + ' s: in graphs, eager, idle' });
    const y = (share) => top + plotH * (1 - share);
    for (const share of [0, 0.5, 1]) {
      s.append(sv('line', { x1: left - 4, x2: left + plotW, y1: y(share), y2: y(share), stroke: share ? '#d7dce5' : '#7d8696' }));
      const t = sv('text', { x: left - 7, y: y(share) + 4, 'text-anchor': 'end' });
      t.textContent = percent(share);
      s.append(t);
    }
    bins.forEach((b, i) => {
      const from = w.start_s + i * w.bin_s, to = Math.min(w.end_s, from + w.bin_s), span = Math.max(0, to - from) * 1e6;
      const gs = span > 0 ? Math.min(1, b[0] / span) : 0, es = span > 0 ? Math.min(1, b[1] / span) : 0;
      const x0 = xOf(from), x1 = xOf(to), gap = x1 - x0 >= 6 ? Math.min(3, (x1 - x0) * 0.12) : 0;
      const x = x0 + gap / 2, bw = Math.max(x1 - x0 - gap, 0.5);
      const grp = sv('g', { class: 'gs-bin', 'data-bin': i, 'data-graph-us': b[0], 'data-eager-us': b[1] });
      const tip = sv('title');
      tip.textContent = from.toFixed(1) + '-' + to.toFixed(1) + ' s: graphs ' + usText(b[0]) + (span > 0 ? ' (' + percent(gs) + ')' : '') +
        ', eager ' + usText(b[1]) + (span > 0 ? ' (' + percent(es) + '), idle ' + percent(Math.max(0, 1 - (b[0] + b[1]) / span)) : '');
      grp.append(tip);
      // Graph time at the bottom, eager above it, idle the rest (a bin's
      // streams can overlap: then the two fill it and idle is none).
      // Work too short to show at the scale gets one pixel: the bin is
      // seen to hold some (its title says how much).
      const eg = Math.min(es, 1 - gs), px = (v) => (v > 0 ? Math.max(1, plotH * v) : 0);
      const hg = px(gs), he = Math.min(px(eg), plotH - hg);
      grp.append(sv('rect', { x, width: bw, y: top, height: Math.max(0, plotH - hg - he), fill: COLORS.idle }));
      grp.append(sv('rect', { x, width: bw, y: top + plotH - hg - he, height: he, fill: COLORS.eager }));
      grp.append(sv('rect', { x, width: bw, y: top + plotH - hg, height: hg, fill: COLORS.graph }));
      s.append(grp);
    });
    // The axis: the first and last record's times at its ends, round
    // seconds between them where they leave room for their labels.
    s.append(sv('line', { x1: left, x2: left + plotW, y1: top + plotH, y2: top + plotH, stroke: '#7d8696' }));
    const every = niceStep((t1 - t0) / Math.max(1, Math.floor(plotW / 60)));
    const digits = every < 0.1 ? 2 : every < 1 ? 1 : 0;
    const ticks = [[t0, 'start', t0.toFixed(Math.max(1, digits))]];
    for (let j = Math.ceil(t0 / every); j * every < t1; ++j) {
      const t = j * every;
      if (xOf(t) - xOf(t0) >= 40 && xOf(t1) - xOf(t) >= 48) ticks.push([t, 'middle', t.toFixed(digits)]);
    }
    ticks.push([t1, 'end', w.end_s.toFixed(Math.max(1, digits)) + ' s']);
    for (const [t, anchor, text] of ticks) {
      const x = xOf(t);
      s.append(sv('line', { x1: x, x2: x, y1: top + plotH, y2: top + plotH + 4, stroke: '#7d8696' }));
      const label = sv('text', { x, y: top + plotH + 16, 'text-anchor': anchor });
      label.textContent = text;
      s.append(label);
    }
    const cap = sv('text', { x: left + plotW / 2, y: top + plotH + 32, 'text-anchor': 'middle', class: 'gs-axis-title' });
    cap.textContent = 'seconds after attach';
    s.append(cap);
    const sw = (c, text) => el('span', { class: 'gs-lg' }, el('span', { class: 'swatch', style: 'background:' + c }), text);
    const legend = el('div', { class: 'legend' }, sw(COLORS.graph, 'in graph replays'), sw(COLORS.eager, 'eager (outside graphs)'), sw(COLORS.idle, 'idle'),
      el('span', { class: 'muted', text: ' \u00b7 share of each ' + w.bin_s + ' s bin (' + plural(n, 'bin', 'bins') + '), from the first record' }));
    return el('div', { class: 'gs-ledger-timeline' }, el('div', { class: 'gs-ledger-sub', text: 'timeline' }), legend, el('div', { class: 'gs-ledger-chart' }, s));
  }
  function niceStep(x) {
    const p = 10 ** Math.floor(Math.log10(x > 0 ? x : 1)), m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  // ---- torch.compile's cudagraph trees, by PyTorch's own records (the
  // Python hook's log) and counters, each record with what it caused.
  function torchRecords(p, k) {
    const T = p.torch;
    const box = el('div', { class: 'gs-ledger-torch', id: 'gs-ledger-torch-' + k },
      el('div', { class: 'gs-ledger-sub', text: 'torch.compile (PyTorch\u2019s own records of its CUDA graphs)' }));
    const records = T.records || [];
    if (!records.length) box.append(line('no record at PyTorch\u2019s default log levels (no skip, no re-recording limit)', 'muted'));
    else {
      const t = el('table', { class: 'grid' });
      t.append(el('tr', null, el('th', { class: 'num', text: 'at' }), el('th', { text: 'record' }), el('th', { text: 'in' }), el('th', { text: 'what it caused' })));
      for (const r of records) {
        const caused = el('td', { class: 'gs-ledger-cell', text: r.caused || '' });
        if (has(r, 'next_graph') && p.graphs[r.next_graph])
          caused.append(' (', graphLink(k, r.next_graph, 'show ' + graphName(p.graphs[r.next_graph])), ')');
        t.append(el('tr', { 'data-kind': r.kind },
          el('td', { class: 'num', 'data-key': 't_s', 'data-value': has(r, 't_s') ? String(r.t_s) : '', text: has(r, 't_s') ? seconds(r.t_s) : '-' }),
          el('td', { class: 'gs-ledger-cell' }, el('span', { class: r.kind === 'skip' || r.kind === 'rerecord_limit' ? 'verdict-fake' : '', text: r.headline || '' }),
            r.level ? el('span', { class: 'muted', text: ' ' + r.level }) : null),
          el('td', { class: 'gs-ledger-cell', text: r.at || '-' }), caused));
      }
      box.append(el('div', { class: 'gs-ledger-wide' }, t));
    }
    // A family's members after its first: recorded again (a new shape, a
    // changed static input), one line a family.
    const again = new Map();
    for (const x of T.rerecorded || []) {
      if (!again.has(x.family)) again.set(x.family, []);
      again.get(x.family).push(x.graph);
    }
    for (const [fi, members] of again) {
      const f = p.families[fi];
      if (!f) continue;
      const d = el('div', { class: 'gs-ledger-line' }, 'recorded again at ' + f.site + ' after ', graphLink(k, f.graphs[0], graphName(p.graphs[f.graphs[0]])), ':');
      members.forEach((i, j) => d.append(j ? ', ' : ' ', graphLink(k, i, graphName(p.graphs[i]))));
      box.append(d);
    }
    const counters = T.counters || {};
    if (Object.keys(counters).length)
      box.append(line('PyTorch\u2019s counters: ' + Object.keys(counters).map((x) => x + ' ' + counters[x]).join(', '), 'muted'));
    return box;
  }

  function processBlock(p, k) {
    const box = el('div', { class: 'gs-ledger-process', id: 'gs-ledger-p' + k, 'data-dir': p.dir });
    const launches = p.graphs.reduce((a, g) => a + (g.launches || 0), 0);
    const cmd = (p.command || []).join(' '), short = cmd.length > 100 ? cmd.slice(0, 97) + '...' : cmd;  // the text's cut
    box.append(el('h3', null, processName(p) + ': ' + plural(p.graphs.length, 'graph', 'graphs') +
      (p.launches_counted ? ', ' + plural(launches, 'launch', 'launches') : ''), el('span', { class: 'muted gs-ledger-cmd', title: cmd, text: ' ' + short })));
    if (p.graphs.length) box.append(graphTable(p, k));
    box.append(costs(p));
    const inFamily = new Set();
    (p.families || []).forEach((f, fi) => { box.append(family(p, k, f, fi)); f.graphs.forEach((i) => inFamily.add(i)); });
    const known = p.launches_counted || p.graphs.some((g) => g.replayed);
    if (known && p.graphs.length) {
      const never = p.graphs.map((g, i) => [g, i]).filter(([g]) => g.replayed === false);
      const d = el('div', { class: 'gs-ledger-line' }, el('b', { text: 'never replayed: ' }));
      if (!never.length) d.append('none');
      never.forEach(([g, i], j) => d.append(j ? ', ' : '', graphLink(k, i, graphName(g)), ' (' + plural(g.nodes, 'node', 'nodes') + ')'));
      box.append(d);
    }
    p.graphs.forEach((g, i) => {
      if (has(g, 'identical_to') && !inFamily.has(i))
        box.append(el('div', { class: 'gs-ledger-line' }, graphLink(k, i, graphName(g)), ' is identical to ',
          graphLink(k, g.identical_to, graphName(p.graphs[g.identical_to])), ': one executable graph would have done'));
    });
    if ((p.updates && p.updates.length) || (p.unchanged_updates && p.unchanged_updates.length) ||
        (p.updates_not_recorded && p.updates_not_recorded.length)) box.append(updates(p, k));
    if (p.liveness || (p.update_failures && p.update_failures.length)) box.append(why(p, k));
    if (p.work) box.append(work(p, k));
    if (p.torch) box.append(torchRecords(p, k));
    return box;
  }

  // The section: a block per process that has graphs or GPU work; of many
  // processes (ranks) the first few open, the others on request, so that
  // the ranks and processes sections stay near the top.
  const OPEN = 4;
  function section() {
    const s = el('section', { id: 'gs-ledger' }, el('h2', { text: 'Ledger' }));
    if (!L) { s.append(el('div', { class: 'note', id: 'gs-ledger-none', text: D.ledger_note || 'no ledger' })); return s; }
    const graphs = L.processes.reduce((a, p) => a + p.graphs.length, 0);
    s.append(el('div', { class: 'muted', text: 'every graph of the run with what it cost, and the GPU work outside graphs (graphscope ledger ' +
      L.run_dir + '; ' + (L.profile ? 'profile --exec' : 'capture --exec') + ', ' + plural(L.processes.length, 'process', 'processes') +
      ', ' + plural(graphs, 'graph', 'graphs') + ')' }));
    if (D.ledger_note) s.append(el('div', { class: 'note', id: 'gs-ledger-note', text: D.ledger_note }));
    const quiet = [], busy = [];
    L.processes.forEach((p, k) => (!p.graphs.length && !p.work ? quiet : busy).push(k));
    busy.slice(0, OPEN).forEach((k) => s.append(processBlock(L.processes[k], k)));
    if (busy.length > OPEN) {
      const rest = busy.slice(OPEN);
      const more = el('details', { id: 'gs-ledger-more' }, el('summary', { text: 'the ledger of ' + plural(rest.length, 'more process', 'more processes') }));
      more.addEventListener('toggle', () => { if (more.open && more.children.length === 1) rest.forEach((k) => more.append(processBlock(L.processes[k], k))); });
      s.append(more);
    }
    if (quiet.length) s.append(line(plural(quiet.length, 'process', 'processes') + ' without graphs or GPU work: ' + quiet.map((k) => processName(L.processes[k])).join(', '), 'muted'));
    // What the indexes do not hold, said once (as the text says it, at the end).
    const missing = [...new Set(busy.flatMap((k) => L.processes[k].not_recorded || []))];
    for (const n of missing) s.append(line(n, 'muted gs-ledger-missing'));
    return s;
  }
  return { section };
}
