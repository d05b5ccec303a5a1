// graphscope report: the page's parts for an --exec run directory (embedded
// with report.js, before it): the ranks section (graphscope ranks' analysis,
// D.ranks, with the numbers of `graphscope ranks --json`), the processes
// (grouped when many are alike), the picker of many graphs and the note on
// a graph drawn once for several (same_as). report.js calls it once with
// the helpers it shares and uses what it returns.
// eslint-disable-next-line no-unused-vars
function graphscopeRunPage(h) {
  'use strict';
  const { D, S, G, el, us, showGraph, select } = h;
  const FEW = 40;  // up to this many processes (or ranks) are listed one a row; more are grouped
  // "0-3, 5, 7-9": numbers, ascending, as ranges.
  function ranges(v) {
    v = [...v].sort((a, b) => a - b);
    const out = [];
    for (let i = 0; i < v.length;) {
      let j = i;
      while (j + 1 < v.length && v[j + 1] === v[j] + 1) ++j;
      out.push(j > i ? v[i] + '-' + v[j] : String(v[i]));
      i = j + 1;
    }
    return out.join(', ');
  }
  const rankWords = (v) => (v.length === 1 ? 'rank ' + v[0] : 'ranks ' + ranges(v) + ' (' + v.length + ')');
  const baseOf = (gi) => (G(gi).same_as !== undefined ? G(gi).same_as : gi);
  function graphLink(gi, text) {
    return el('span', { class: 'link', 'data-graph': gi, onclick: () => showGraph(gi) }, text);
  }
  function graphText(gi) {
    const g = G(gi);
    return 'graph ' + (g.exec_graph_id === null ? '?' : g.exec_graph_id) + ' (' + g.nodes + ' nodes' +
      (g.profile ? ', ' + us(g.profile.makespan_us) : '') + ')';
  }
  function processRow(p) {
    const gs = el('td');
    p.graphs.forEach((gi) => gs.append(graphLink(gi, graphText(gi)), ' '));
    const sk = el('td');
    for (const x of p.skipped) sk.append(el('div', { text: 'graph ' + (x.exec_graph_id === null ? '?' : x.exec_graph_id) + ': ' + x.why }));
    for (const x of p.errors) sk.append(el('div', { class: 'note', text: x }));
    return el('tr', null, el('td', { text: p.rank !== undefined ? 'rank ' + p.rank + ' (pid ' + p.pid + ')' : p.dir + ' (pid ' + p.pid + ')' }),
      el('td', { text: S(p.command) }), el('td', { text: S(p.device) }), el('td', { text: stateText(p) }), gs, sk);
  }
  const stateText = (p) => (p.attached ? 'attached' : 'not attached') + (p.complete ? ', ran to its end' : ', ended early') + (S(p.problem) ? '; ' + S(p.problem) : '');
  function processTable(list) {
    const t = el('table', { class: 'grid' });
    t.append(el('tr', null, el('th', { text: 'process' }), el('th', { text: 'command' }), el('th', { text: 'device' }),
      el('th', { text: 'state' }), el('th', { text: 'graphs' }), el('th', { text: 'not dumped' })));
    for (const p of list) t.append(processRow(p));
    return t;
  }
  function runIndex() {
    const s = el('section', { id: 'gs-index' }, el('h2', { text: 'Processes of the run' }));
    const ps = D.run.processes;
    s.append(el('div', { class: 'muted', text: 'command: ' + D.run.command.join(' ') + ' \u00b7 exit code ' + D.run.exit_code +
      (D.run.profile ? ' \u00b7 profiled' : '') + ' \u00b7 ' + ps.length + (ps.length === 1 ? ' process' : ' processes') }));
    if (ps.length <= FEW) { s.append(processTable(ps)); return s; }
    // Many processes: those alike (the same command, device model, state,
    // graphs drawn alike and nothing skipped) as one row.
    const groups = new Map();
    for (const p of ps) {
      // Graphs alike: drawn as one (same_as), or, profiled each with its
      // own, of the same exec graph and node count.
      const like = (gi) => (G(gi).profile ? 'p' + G(gi).exec_graph_id + ':' + G(gi).nodes : baseOf(gi));
      const key = [p.rank !== undefined, S(p.command), S(p.device).replace(/ \(GPU .*\)$/, ''), stateText(p),
        p.graphs.map(like).join(','), p.skipped.length + p.errors.length ? p.dir : ''].join('\u001f');
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(p);
    }
    const t = el('table', { class: 'grid', id: 'gs-process-groups' });
    t.append(el('tr', null, el('th', { text: 'processes' }), el('th', { text: 'command' }), el('th', { text: 'device' }),
      el('th', { text: 'state' }), el('th', { text: 'graphs (the first process\u2019s; the others\u2019 alike)' }), el('th', { text: 'not dumped' })));
    for (const list of groups.values()) {
      const p = list[0], ranked = list.filter((x) => x.rank !== undefined).map((x) => x.rank);
      const who = ranked.length === list.length ? (list.length > 1 ? 'ranks ' + ranges(ranked) + ' (' + list.length + ' processes)' : 'rank ' + ranked[0] + ' (pid ' + p.pid + ')') :
        list.length === 1 ? p.dir + ' (pid ' + p.pid + ')' : list.length + ' processes (pids ' + ranges(list.map((x) => x.pid)) + ')';
      const gpus = [...new Set(list.map((x) => (S(x.device).match(/\(GPU ([0-9]+)/) || [])[1]).filter((x) => x !== undefined))];
      const row = processRow(p);
      row.children[0].textContent = who;
      row.children[2].textContent = list.length === 1 ? S(p.device) : S(p.device).replace(/ \(GPU .*\)$/, '') +
        (gpus.length ? ' (GPU' + (gpus.length > 1 ? 's ' : ' ') + ranges(gpus.map(Number)) + ')' : '');
      t.append(row);
    }
    s.append(t);
    const all = el('details', { id: 'gs-process-list' }, el('summary', { text: 'every process, one a row (' + ps.length + ')' }));
    all.addEventListener('toggle', () => { if (all.open && all.children.length === 1) all.append(processTable(ps)); });
    s.append(all);
    return s;
  }

  // ---- a multi-rank run: graphscope ranks' analysis (D.ranks, the numbers of `graphscope ranks --json`)
  function ranksSection() {
    const R = D.ranks;
    const s = el('section', { id: 'gs-ranks' }, el('h2', { text: 'Ranks' }));
    s.append(el('div', { id: 'gs-ranks-result', 'data-same': R.same ? '1' : '0' },
      el('b', { class: R.same ? 'verdict-real' : 'verdict-fake', text: R.same ? 'The ranks agree: ' : 'The ranks differ: ' }), R.result));
    for (const n of R.notes) s.append(el('div', { class: 'note', text: n }));
    const rankNo = (x) => R.rank[x];
    // Opens rank x's graph of a row and selects node v in it.
    const nodeIn = (row, x, v, text) => el('span', { class: 'link', 'data-rank': rankNo(x), 'data-node': v, onclick: () => {
      const gi = row.page[x];
      if (gi < 0) return;
      showGraph(gi);
      select(gi, [v], v, true);
      document.getElementById('gs-graph').scrollIntoView();
    } }, text);
    const sideText = (side, x) => ({ added: 'only in rank ' + rankNo(x), removed: 'only in rank ' + rankNo(0), changed: 'changed',
      edge_added: 'an edge into it only in rank ' + rankNo(x), edge_removed: 'an edge into it only in rank ' + rankNo(0),
      edge_retyped: 'an edge into it changed type' })[side] || side;
    const rowName = (row) => (row.index === null ? 'a graph only some ranks have' : 'graph #' + row.index);
    const collective = (row, x, c) => el('span', null, nodeIn(row, x, c.node, 'node ' + c.node), (c.nested ? ' (in its body)' : '') + ' ' + c.name + (c.origin ? ' \u2014 ' + c.origin : ''));
    // Where a differing rank's collectives part from the reference's.
    function partAt(row, x, kind) {
      const k = kind.collectives_part_at, ref = row.kinds[row.kind[0]].collectives, own = kind.collectives;
      const side = (list, y) => (k < list.length ? collective(row, y, list[k]) : el('span', { text: 'has no more' }));
      return el('div', { class: 'gs-part' }, 'collectives part at the ' + ordinal(k + 1) + ': rank ' + rankNo(0) + ' ', side(ref, 0),
        '; rank ' + rankNo(x) + ' ', side(own, x));
    }
    function firstLine(row, x, kind) {
      const d = el('span');
      const f = kind.first_node;
      if (f) {
        const onRank = f.side === 'added' || f.side === 'edge_added';
        d.append(nodeIn(row, onRank ? x : 0, f.node, 'node ' + f.node + ' ' + f.name), ', ' + sideText(f.side, x) + (f.origin ? ' \u2014 ' + f.origin : ''));
      }
      return d;
    }
    if (R.first_difference) {
      const row = R.graphs[R.first_difference.row], x = R.first_difference.rank, kind = row.kinds[row.kind[x]];
      const box = el('div', { id: 'gs-ranks-first' }, el('b', { text: 'First difference: ' }), rowName(row) + ', rank ' + rankNo(x) +
        (kind.has_graph ? '' : ': ' + kind.differences.join('; ')));
      if (kind.first_node) box.append(el('div', null, 'first node that differs: ', firstLine(row, x, kind)));
      if (kind.has_graph && kind.differences.length) box.append(el('div', { class: 'muted', text: 'differences: ' + kind.differences.join('; ') }));
      if (kind.collectives_part_at !== undefined) box.append(partAt(row, x, kind));
      s.append(box);
    }
    R.graphs.forEach((row, k) => s.append(ranksRow(row, k)));
    return s;

    function ranksRow(row, k) {
      const box = el('div', { id: 'gs-ranks-graph-' + k, class: 'gs-ranks-graph' });
      const n = row.kind.length;
      box.append(el('h3', { text: rowName(row) + (row.same ? ': all ' + n + ' ranks agree' : ': the ranks differ') }));
      // Ranks alike, once: agreeing, or differing the same way.
      const members = row.kinds.map(() => []);
      row.kind.forEach((kd, x) => members[kd].push(x));
      const t = el('table', { class: 'grid' });
      t.append(el('tr', null, el('th', { text: 'ranks' }), el('th', { text: 'graph' }), el('th', { text: 'against rank ' + rankNo(0) }),
        el('th', { text: 'collective kernels in capture order' })));
      row.kinds.forEach((kind, kd) => {
        const xs = members[kd], x = xs[0];
        const verdict = el('td');
        if (x === 0) verdict.append(el('span', { class: 'muted', text: 'the reference' }));
        else if (kind.same) verdict.append(el('span', { text: kind.has_graph ? 'the same graph' : '-' }));
        else {
          verdict.append(el('div', { class: 'verdict-fake', text: kind.differences.join('; ') }));
          if (kind.first_node) verdict.append(el('div', null, 'first: ', firstLine(row, x, kind)));
          if (kind.collectives_part_at !== undefined) verdict.append(partAt(row, x, kind));
        }
        const cs = el('td');
        if (!kind.has_graph) cs.append(el('span', { class: 'muted', text: 'no such graph' }));
        else if (!kind.collectives.length) cs.append(el('span', { class: 'muted', text: 'none' }));
        kind.collectives.forEach((c, i) => cs.append(el('div', null, (i + 1) + '. ', collective(row, x, c))));
        const gi = row.page[x];
        t.append(el('tr', { 'data-kind': kd }, el('td', { text: rankWords(xs.map(rankNo)), style: 'white-space:nowrap' }),
          el('td', { style: 'white-space:nowrap' }, gi >= 0 ? graphLink(gi, 'rank ' + rankNo(x) + '\u2019s' + (xs.length > 1 ? ' (the others\u2019 alike)' : '')) : '-'),
          verdict, cs));
      });
      box.append(t);
      if (row.profile) box.append(profileTable(row, k));
      if (row.waits.length) row.waits.forEach((w) => box.append(waitTable(row, k, w)));
      else if (row.waits_note) box.append(el('div', { class: 'note', text: 'collectives not timed: ' + row.waits_note }));
      return box;
    }
    // Rows of many ranks: the telling ones first, every one on request.
    function limited(table, xs, row) {
      if (xs.length <= FEW) { xs.forEach((x) => table.append(row(x))); return table; }
      const wrap = el('div');
      xs.slice(0, 12).forEach((x) => table.append(row(x)));
      const more = el('button', { text: 'every rank (' + xs.length + ')', onclick: () => { xs.slice(12).forEach((x) => table.append(row(x))); more.remove(); } });
      wrap.append(table, more);
      return wrap;
    }
    function profileTable(row, k) {
      const p = row.profile, xs = row.kind.map((_, x) => x);
      const order = xs.length <= FEW ? xs : [...new Set([0, ...row.waits.map((w) => w.last),
        ...[...xs].sort((a, b) => (p.collective_wait_us[b] || 0) - (p.collective_wait_us[a] || 0)).slice(0, 4),
        ...[...xs].sort((a, b) => (p.makespan_us[b] || 0) - (p.makespan_us[a] || 0)).slice(0, 4), ...xs])];
      const t = el('table', { class: 'grid', id: 'gs-ranks-profile-' + k });
      t.append(el('tr', null, el('th', { text: 'rank' }), el('th', { class: 'num', text: 'launches' }), el('th', { class: 'num', text: 'makespan' }),
        el('th', { class: 'num', text: 'critical path' }), el('th', { class: 'num', text: 'fake / blocking' }), el('th', { class: 'num', text: 'in collectives' }),
        el('th', { class: 'num', text: 'waited at collectives (median)' }), el('th', { class: 'num', text: 'arrived last' })));
      const cell = (v, key) => el('td', { class: 'num', 'data-key': key, 'data-value': v === null ? '' : v, text: v === null ? '-' : us(v) });
      const line = (x) => (p.launches[x] === null ? el('tr', null, el('td', { text: 'rank ' + rankNo(x) }), el('td', { colspan: 7, class: 'muted', text: 'not profiled' })) :
        el('tr', { 'data-rank': rankNo(x) }, el('td', null, row.page[x] >= 0 ? graphLink(row.page[x], 'rank ' + rankNo(x)) : 'rank ' + rankNo(x)),
          el('td', { class: 'num', text: String(p.launches[x]) }), cell(p.makespan_us[x], 'makespan_us'), cell(p.critical_path_us[x], 'critical_path_us'),
          el('td', { class: 'num', text: p.fake[x] + ' / ' + p.blocking[x] }), cell(p.collective_us[x], 'collective_us'),
          cell(p.collective_wait_us[x], 'collective_wait_us'),
          el('td', { class: 'num', 'data-key': 'arrived_last', 'data-value': p.arrived_last[x], text: p.collective_wait_us[x] === null ? '-' : p.arrived_last[x] + ' of ' + p.collectives_timed[x] })));
      return el('div', null, el('div', { class: 'muted', text: 'profiles, medians over replays' + (xs.length > FEW ? ' (the reference, the ranks that arrived last, waited or took longest first)' : '') }),
        limited(t, order, line));
    }
    function waitTable(row, k, w) {
      const xs = row.kind.map((_, x) => x);
      const order = xs.length <= FEW ? xs : [...new Set([w.last, ...[...xs].sort((a, b) => w.wait_us[b] - w.wait_us[a])])];
      const t = el('table', { class: 'grid', id: 'gs-ranks-waits-' + k + '-' + w.position });
      t.append(el('tr', null, el('th', { text: 'rank' }), el('th', { class: 'num', text: 'waited (median over replays)' }),
        el('th', { class: 'num', text: 'longest wait' }), el('th', { class: 'num', text: 'arrived last' })));
      const line = (x) => el('tr', { 'data-rank': rankNo(x) }, el('td', { text: 'rank ' + rankNo(x) + (x === w.last ? ' (arrived last)' : '') }),
        el('td', { class: 'num', 'data-key': 'wait_us', 'data-value': w.wait_us[x], text: us(w.wait_us[x]) }),
        el('td', { class: 'num', 'data-key': 'max_wait_us', 'data-value': w.max_wait_us[x], text: us(w.max_wait_us[x]) }),
        el('td', { class: 'num', 'data-key': 'arrived_last', 'data-value': w.arrived_last[x], text: w.arrived_last[x] + ' of ' + w.replays + ' replays' }));
      const head = el('div', null, el('b', { text: 'collective ' + (w.position + 1) + ': ' }),
        w.node !== null ? nodeIn(row, 0, w.node, 'node ' + w.node + ' ' + w.name) : w.name,
        ' \u2014 ' + w.replays + ' replays; rank ' + w.last_rank + ' arrived last in ' + w.arrived_last[w.last] + ' of them (the others waited for it); ' +
        'skew ' + us(w.skew_us) + ' (median, last start minus first)');
      return el('div', { class: 'gs-ranks-wait' }, head, limited(t, order, line));
    }
  }
  // A run's graph drawn once for several: which, and whose it is.
  function sharedNote(gi) {
    const b = baseOf(gi), alike = [];
    D.graphs.forEach((g, k) => { if (baseOf(k) === b) alike.push(k); });
    if (alike.length < 2) return null;
    const ps = alike.map((k) => D.run.processes[G(k).process]).filter((p) => p);
    const ranked = ps.filter((p) => p.rank !== undefined).map((p) => p.rank);
    const whose = ranked.length === ps.length ? rankWords(ranked) : alike.length + ' graphs';
    const d = el('div', { class: 'note', id: 'gs-shared', 'data-alike': alike.length });
    if (b !== gi) d.append('The same graph as ', graphLink(b, G(b).label), ' (the same ids, nodes, names, origins and edges): drawn once for ' + whose +
      '; its picture, folding and summary are that one\u2019s.');
    else d.append('Drawn once for ' + whose + ': their graphs are the same as this one (the same nodes, names, origins and edges).');
    return d;
  }
  function ordinal(n) {
    const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' })[n % 10] || 'th';
    return n + s;
  }
  // Graphs to pick: a button per graph; of many, a button per graph drawn
  // differently, with how many are alike, and any process's or rank's
  // graph by its number.
  function picker() {
    const pick = el('section', { id: 'gs-picker' }, el('h2', { text: 'Graphs' }));
    const row = el('div', { class: 'graphpick' });
    const many = D.graphs.length > FEW;
    const alike = new Map();
    D.graphs.forEach((g, gi) => { const b = baseOf(gi); alike.set(b, (alike.get(b) || 0) + 1); });
    D.graphs.forEach((g, gi) => {
      if (many && g.same_as !== undefined) return;
      const n = alike.get(gi) || 1;
      row.append(el('button', { 'data-graph': gi, onclick: () => showGraph(gi),
        text: g.label + ' (' + g.nodes + ')' + (many && n > 1 ? ' and ' + (n - 1) + ' alike' : '') }));
    });
    pick.append(row);
    if (many) {
      const input = el('input', { id: 'gs-rank-pick', type: 'search', placeholder: D.ranks ? 'rank' : 'pid' });
      const said = el('span', { class: 'muted' });
      const open = () => {
        const want = input.value.trim();
        const ps = D.run.processes.filter((p) => String(p.rank !== undefined ? p.rank : p.pid) === want || String(p.pid) === want);
        const p = ps.find((q) => q.graphs.length);
        if (p) { said.textContent = ''; showGraph(p.graphs[0]); } else said.textContent = ps.length ? ' it has no graph' : ' no such process';
      };
      input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') open(); });
      pick.append(el('div', { class: 'toolbar' }, el('span', { text: 'the graph of ' + (D.ranks ? 'rank (or pid) ' : 'pid ') }), input,
        el('button', { onclick: open, text: 'show' }), said));
    }
    return pick;
  }
  return { FEW, baseOf, ranksSection, runIndex, picker, sharedNote };
}
