// Generates the yjs-doc merger fixtures (SPEC §5.10.2) from the real Yjs library.
// Usage (from this directory): npm install && node generate.mjs
// Writes ../../resources/crdt/yjs/<case>.json. The Java tests only read those files; they never run node.
import * as Y from 'yjs'
import { writeFileSync, mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const OUT = join(dirname(fileURLToPath(import.meta.url)), '../../resources/crdt/yjs')
const EMPTY = new Uint8Array([0, 0])
const hex = (u) => Buffer.from(u).toString('hex')

/** A doc with a fixed client id, so every run gives the same bytes. */
const newDoc = (clientID, gc = true) => {
  const d = new Y.Doc({ gc })
  d.clientID = clientID
  return d
}

/** Records every update a doc emits. */
const recorder = (doc) => {
  const updates = []
  doc.on('update', (u) => updates.push(u))
  return updates
}

/** lib0 varuint bytes, for hand-made state vectors. */
const varuint = (n) => { const o = []; while (n > 127) { o.push(0x80 | (n & 127)); n = Math.floor(n / 128) } o.push(n); return o }

const sync = (from, to) => Y.applyUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)))

/** What a Yjs client sees in merged bytes: each named root rendered to JSON. */
const content = (bytes, roots) => {
  const d = new Y.Doc()
  Y.applyUpdate(d, bytes)
  const out = {}
  for (const [name, kind] of Object.entries(roots)) {
    if (kind === 'text') out[name] = d.getText(name).toString()
    else if (kind === 'delta') out[name] = d.getText(name).toDelta()
    else if (kind === 'map') out[name] = d.getMap(name).toJSON()
    else if (kind === 'array') out[name] = d.getArray(name).toJSON()
    else if (kind === 'xml') out[name] = d.getXmlFragment(name).toString()
  }
  out['$pending'] = d.store.pendingStructs !== null || d.store.pendingDs !== null
  d.destroy()
  return JSON.parse(JSON.stringify(out, (k, v) => (v instanceof Uint8Array ? { $u8: hex(v) } : typeof v === 'bigint' ? { $bigint: String(v) } : v)))
}

const permutations = (xs) => xs.length <= 1 ? [xs] : xs.flatMap((x, i) =>
  permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]))

/**
 * The reference merger (@syncular/crdt-yjs, SPEC §5.10.2): apply the stored state and the incoming update to a
 * fresh doc (gc on) and encode the whole state. A null or empty stored value is the empty document.
 */
const refMerge = (stored, incoming) => {
  const d = new Y.Doc()
  if (stored && stored.length) Y.applyUpdate(d, stored)
  if (incoming.length) Y.applyUpdate(d, incoming)
  const out = Y.encodeStateAsUpdate(d)
  d.destroy()
  return out
}

/** The server's fold: stored = merge(stored, incoming) for each push, starting from no stored value. */
const fold = (updates) => updates.reduce((acc, u) => refMerge(acc, u), null)

/**
 * One fixture: named input updates, each normalized by Y.mergeUpdates (`normalized`) and stored alone by the
 * reference merger (`stored`); for every order (all of them up to 4 inputs) Y.mergeUpdates of the whole list
 * (`merged`, what the server's UpdateMerger still does for pending structs) and the server's fold with the
 * reference merger (`folded`), with the content each decodes to; the reference merger of every ordered pair
 * (`pairs`); re-delivery of each input into the final state (idempotence) and associativity.
 */
const fixture = (name, description, roots, inputs, { orders = null, converges = true } = {}) => {
  const names = Object.keys(inputs)
  const chosen = orders ?? (names.length <= 4 ? permutations(names) : [names, [...names].reverse()])
  const merges = chosen.map((order) => {
    const list = order.map((n) => inputs[n])
    const merged = Y.mergeUpdates(list)
    const folded = fold(list)
    return { order, merged: hex(merged), mergedContent: content(merged, roots), folded: hex(folded), foldedContent: content(folded, roots) }
  })
  const expected = merges[0].foldedContent
  if (converges) {
    for (const m of merges) {
      for (const c of [m.mergedContent, m.foldedContent]) {
        if (JSON.stringify(c) !== JSON.stringify(expected)) {
          throw new Error(`${name}: order ${m.order} gives ${JSON.stringify(c)} not ${JSON.stringify(expected)}`)
        }
      }
    }
  }
  const pairs = []
  for (const x of names) {
    for (const y of names) {
      // every ordered pair; past six inputs only neighbours in file order, both ways
      const near = Math.abs(names.indexOf(x) - names.indexOf(y)) === 1
      if (x !== y && (names.length <= 6 || near)) pairs.push({ stored: x, incoming: y, merged: hex(refMerge(inputs[x], inputs[y])) })
    }
  }
  // The reference state: every input applied, in file order, to one fresh doc.
  const ref = new Y.Doc()
  for (const n of names) Y.applyUpdate(ref, inputs[n])
  const referenceState = Y.encodeStateAsUpdate(ref)
  ref.destroy()
  const final = fold(names.map((n) => inputs[n]))
  const redelivered = names.map((n) => {
    const again = refMerge(final, inputs[n])
    return { input: n, merged: hex(again), content: content(again, roots) }
  })
  // Associativity over the first three inputs: (x ⊕ y) ⊕ z against x ⊕ (y ⊕ z).
  const [x, y, z] = names.slice(0, 3).map((n) => inputs[n])
  const assoc = z === undefined ? null : (() => {
    const left = refMerge(refMerge(x, y), z)
    const right = refMerge(x, refMerge(y, z))
    return { inputs: names.slice(0, 3), left: hex(left), leftContent: content(left, roots), right: hex(right), rightContent: content(right, roots) }
  })()
  const finalTwice = refMerge(final, final)
  const doc = {
    name,
    description,
    generator: 'src/test/js/yjs-fixtures/generate.mjs with yjs 13.6.33',
    roots,
    inputs: names.map((n) => ({
      name: n,
      bytes: hex(inputs[n]),
      normalized: hex(Y.mergeUpdates([EMPTY, inputs[n]])),
      stored: hex(refMerge(null, inputs[n])),
      content: content(inputs[n], roots)
    })),
    expectedContent: expected,
    converges,
    merges,
    pairs,
    final: hex(final),
    referenceState: hex(referenceState),
    referenceContent: content(referenceState, roots),
    redelivered,
    finalTwice: hex(finalTwice),
    finalTwiceContent: content(finalTwice, roots),
    assoc
  }
  writeFileSync(join(OUT, `${name}.json`), JSON.stringify(doc, null, 1) + '\n')
  return doc
}

mkdirSync(OUT, { recursive: true })
const A = 1001
const B = 2002
const C = 3000000001 // a client id past 31 bits (five-byte varuint)

// 1. Text typed by three clients from a shared start, concurrently at both ends and in the middle.
{
  const a = newDoc(A); const b = newDoc(B); const c = newDoc(C)
  a.getText('t').insert(0, 'hello world')
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b); sync(a, c)
  const ua = recorder(a); const ub = recorder(b); const uc = recorder(c)
  a.getText('t').insert(11, '!')
  b.getText('t').insert(0, 'B: ')
  c.getText('t').insert(5, ',')
  fixture('text-three-clients', 'a seed then concurrent single edits by three clients', { t: 'text' },
    { seed, a: ua[0], b: ub[0], c: uc[0] })
}

// 2. Concurrent inserts at the same position, and deletes (a gc doc and a non-gc doc).
{
  const a = newDoc(A, false); const b = newDoc(B, true)
  a.getText('t').insert(0, 'abcdef')
  sync(a, b)
  const ua = recorder(a); const ub = recorder(b)
  a.getText('t').insert(3, 'XX')
  b.getText('t').insert(3, 'YY')
  a.getText('t').delete(0, 2)
  b.getText('t').delete(4, 2)
  fixture('text-concurrent-deletes', 'same-position inserts and overlapping deletes from two clients',
    { t: 'text' }, {
      stateA: Y.encodeStateAsUpdate(a),
      stateB: Y.encodeStateAsUpdate(b),
      a: Y.mergeUpdates(ua),
      b: Y.mergeUpdates(ub)
    })
}

// 3. Keystrokes: one update per character, with a backspace, from two clients.
{
  const a = newDoc(A); const b = newDoc(B)
  const ua = recorder(a); const ub = recorder(b)
  for (const ch of 'note') a.getText('t').insert(a.getText('t').length, ch)
  sync(a, b)
  for (const ch of 'xy') b.getText('t').insert(0, ch)
  b.getText('t').delete(0, 1)
  for (const ch of '!?') a.getText('t').insert(a.getText('t').length, ch)
  const inputs = {}
  ua.forEach((u, i) => { inputs[`a${i}`] = u })
  ub.forEach((u, i) => { inputs[`b${i}`] = u })
  fixture('text-keystrokes', 'one update per keystroke (typing, a backspace) from two clients', { t: 'text' }, inputs)
}

// 4. Map edits: every lib0 value kind, overwrites and deletes from two clients.
{
  const a = newDoc(A); const b = newDoc(C)
  const ua = recorder(a); const ub = recorder(b)
  const m = a.getMap('m')
  m.set('title', 'draft')
  m.set('count', 42)
  m.set('neg', -7)
  m.set('big', 2 ** 40)
  m.set('ratio', 0.5)
  m.set('pi', 3.141592653589793)
  m.set('nothing', null)
  m.set('yes', true)
  m.set('no', false)
  m.set('obj', { b: 1, a: [1, 'x', { deep: null }], 2: 'two', 1: 'one' })
  m.set('bin', new Uint8Array([1, 2, 255]))
  m.set('bigint', 12345678901234567890n)
  sync(a, b)
  b.getMap('m').set('title', 'final')
  b.getMap('m').delete('neg')
  a.getMap('m').set('count', 43)
  fixture('map-edits', 'map values of every lib0 kind, concurrent overwrites and a delete', { m: 'map' },
    { a1: ua[0], a2: Y.mergeUpdates(ua.slice(1)), b: Y.mergeUpdates(ub) })
}

// 5. Arrays with nested shared types, rich text formatting, embeds and XML.
{
  const a = newDoc(A); const b = newDoc(B)
  const ua = recorder(a); const ub = recorder(b)
  const arr = a.getArray('a')
  arr.insert(0, [1, 2, 3, 'four'])
  const inner = new Y.Map()
  arr.push([inner])
  inner.set('k', 'v')
  const innerText = new Y.Text()
  arr.push([innerText])
  innerText.insert(0, 'nested')
  const t = a.getText('t')
  t.insert(0, 'bold plain')
  t.format(0, 4, { bold: true })
  t.insertEmbed(4, { image: 'x.png' })
  const x = a.getXmlFragment('x')
  const el = new Y.XmlElement('p')
  el.setAttribute('class', 'lead')
  x.insert(0, [el])
  el.insert(0, [new Y.XmlText('para')])
  sync(a, b)
  b.getArray('a').delete(1, 2)
  b.getArray('a').insert(0, ['zero'])
  a.getArray('a').push([5])
  fixture('array-nested', 'array edits with nested map/text, formatted text with an embed, an XML element',
    { a: 'array', t: 'delta', x: 'xml' }, { a: Y.mergeUpdates(ua), b: Y.mergeUpdates(ub) })
}

// 6. An offline client replays its outbox: updates delivered twice, out of order, and with a gap.
{
  const a = newDoc(A); const b = newDoc(B)
  a.getText('t').insert(0, 'shared ')
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b)
  const ua = recorder(a)
  a.getText('t').insert(7, 'one ')
  a.getText('t').insert(11, 'two ')
  a.getText('t').insert(15, 'three')
  const ub = recorder(b)
  b.getText('t').insert(0, '> ')
  fixture('offline-replay', 'an offline client replays three updates (twice, reordered, with a gap) next to another client',
    { t: 'text' }, { o1: ua[0], o2: ua[1], o3: ua[2], online: ub[0], dup1: ua[0], seed },
    {
      orders: [
        ['seed', 'online', 'o1', 'o2', 'o3', 'dup1'],
        ['seed', 'o1', 'dup1', 'online', 'o3', 'o2'],
        ['seed', 'o3', 'o1', 'online', 'o2', 'dup1'],
        ['o2', 'o3', 'seed', 'online', 'o1', 'dup1']
      ]
    })
  // A gap that stays open: o2 never arrives, so the merge keeps a skip and Yjs holds o3 as pending.
  fixture('offline-gap', 'o2 never arrives: the merged update carries a skip and o3 stays pending',
    { t: 'text' }, { seed, o1: ua[0], o3: ua[2] })
}

// 7. Overlapping states: a full state against updates that start inside its items (slicing), emoji included.
{
  const a = newDoc(A)
  const t = a.getText('t')
  t.insert(0, 'ab😀cd')
  // state vectors that say "client A up to clock 3" (inside the surrogate pair) and "up to clock 1"
  const fromInside = Y.encodeStateAsUpdate(a, new Uint8Array([1, ...varuint(A), 3]))
  const from1 = Y.encodeStateAsUpdate(a, new Uint8Array([1, ...varuint(A), 1]))
  t.insert(6, ' more')
  const full = Y.encodeStateAsUpdate(a)
  t.delete(0, 3)
  const afterDelete = Y.encodeStateAsUpdate(a)
  fixture('overlap-slicing', 'updates that start inside a longer item (split in a surrogate pair) merged with full states',
    { t: 'text' }, { full, fromInside, from1, afterDelete })
}

// 8. Three clients insert at the same position concurrently (YATA conflict resolution), in text and in an array.
{
  const a = newDoc(A); const b = newDoc(B); const c = newDoc(C)
  a.getText('t').insert(0, 'ac')
  a.getArray('a').insert(0, ['first', 'last'])
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b); sync(a, c)
  const ua = recorder(a); const ub = recorder(b); const uc = recorder(c)
  a.getText('t').insert(1, 'AAA')
  b.getText('t').insert(1, 'BB')
  c.getText('t').insert(1, 'C')
  a.getArray('a').insert(1, ['a1', 'a2'])
  b.getArray('a').insert(1, ['b1'])
  c.getArray('a').insert(1, [{ c: 1 }])
  c.getText('t').insert(2, 'c') // after its own first insert
  fixture('concurrent-same-position', 'three clients insert at the same text and array position concurrently',
    { t: 'text', a: 'array' }, { seed, a: Y.mergeUpdates(ua), b: Y.mergeUpdates(ub), c: Y.mergeUpdates(uc) })
}

// 9. A map key set concurrently by three clients, one value a nested map (overwritten: its children are GC'd).
{
  const a = newDoc(A); const b = newDoc(B); const c = newDoc(C)
  a.getMap('m').set('k', 'seed')
  a.getMap('m').set('keep', 1)
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b); sync(a, c)
  const ua = recorder(a); const ub = recorder(b); const uc = recorder(c)
  a.getMap('m').set('k', 'from a')
  const nested = new Y.Map()
  b.getMap('m').set('k', nested)
  nested.set('x', 'inner')
  nested.set('y', new Y.Text('deep'))
  c.getMap('m').set('k', 'from c')
  c.getMap('m').set('k', 'from c again')
  fixture('map-concurrent-overwrite', 'one map key set concurrently by three clients, one value a nested map with children',
    { m: 'map' }, { seed, a: Y.mergeUpdates(ua), b: Y.mergeUpdates(ub), c: Y.mergeUpdates(uc) })
}

// 10. A nested type with children is deleted while another client still adds children to it (GC structs).
{
  const a = newDoc(A); const b = newDoc(B)
  const arr = a.getArray('a')
  const inner = new Y.Map()
  const innerText = new Y.Text()
  const innerArr = new Y.Array()
  arr.insert(0, ['before', inner, innerText, innerArr, 'after'])
  inner.set('x', 1)
  inner.set('y', 'two')
  inner.set('x', 3)
  innerText.insert(0, 'some text')
  innerArr.insert(0, [1, 2, 3])
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b)
  const ua = recorder(a); const ub = recorder(b)
  a.getArray('a').delete(1, 3)
  b.getArray('a').get(1).set('z', 'late')
  b.getArray('a').get(2).insert(4, ' more')
  b.getArray('a').get(3).push([4])
  b.getArray('a').insert(5, ['end'])
  fixture('nested-type-deleted', 'a map, a text and an array with children deleted while another client edits them',
    { a: 'array' }, { seed, del: Y.mergeUpdates(ua), edit: Y.mergeUpdates(ub) })
}

// 11. Interleaved deletes: every other character, then the rest, so deleted runs join when merged.
{
  const a = newDoc(A); const b = newDoc(B)
  const ua = recorder(a)
  const t = a.getText('t')
  for (const ch of 'abcdefghijkl') t.insert(t.length, ch)
  sync(a, b)
  const ub = recorder(b)
  for (let i = 10; i >= 0; i -= 2) b.getText('t').delete(i, 1)
  const firstHalf = ub.length
  b.getText('t').delete(0, 3)
  b.getText('t').insert(0, 'Z')
  const inputs = { typed: Y.mergeUpdates(ua) }
  inputs.odd = Y.mergeUpdates(ub.slice(0, firstHalf))
  inputs.rest = Y.mergeUpdates(ub.slice(firstHalf))
  for (let i = 0; i < 3; i++) inputs[`k${i}`] = ua[i]
  fixture('interleaved-deletes', 'deletes of every other character and then of the rest, next to keystroke updates',
    { t: 'text' }, inputs, {
      orders: [
        ['typed', 'odd', 'rest', 'k0', 'k1', 'k2'],
        ['k0', 'k1', 'k2', 'rest', 'odd', 'typed'],
        ['rest', 'odd', 'typed', 'k2', 'k1', 'k0'],
        ['odd', 'k1', 'typed', 'rest', 'k0', 'k2']
      ]
    })
}

// 12. Formatting: concurrent bold/italic ranges on root text and on a nested XML text (Yjs cleans up
// formatting items after a remote transaction on a nested text).
{
  const a = newDoc(A); const b = newDoc(B); const c = newDoc(C)
  a.getText('t').insert(0, 'hello world')
  const frag = a.getXmlFragment('x')
  const p = new Y.XmlElement('p')
  frag.insert(0, [p])
  const xt = new Y.XmlText()
  p.insert(0, [xt])
  xt.insert(0, 'formatted paragraph text')
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b); sync(a, c)
  const ua = recorder(a); const ub = recorder(b); const uc = recorder(c)
  a.getText('t').format(0, 5, { bold: true })
  a.getXmlFragment('x').get(0).get(0).format(0, 9, { bold: true })
  b.getText('t').format(3, 6, { bold: true })
  b.getXmlFragment('x').get(0).get(0).format(5, 10, { bold: true })
  b.getXmlFragment('x').get(0).get(0).format(0, 4, { italic: true })
  c.getText('t').format(2, 4, { bold: null })
  c.getXmlFragment('x').get(0).get(0).format(2, 12, { bold: true, link: { href: 'x' } })
  c.getXmlFragment('x').get(0).get(0).insert(3, 'INS', { bold: true })
  fixture('formatting', 'concurrent formatting of root text and of a nested XML text by three clients',
    { t: 'delta', x: 'xml' }, { seed, a: Y.mergeUpdates(ua), b: Y.mergeUpdates(ub), c: Y.mergeUpdates(uc) })
}

// 13. Dependencies that arrive later: B edits on top of A's update before the server has A's update, and
// deletes content the server does not have yet (pending structs and a pending delete set).
{
  const a = newDoc(A); const b = newDoc(B)
  a.getText('t').insert(0, 'base')
  const seed = Y.encodeStateAsUpdate(a)
  sync(a, b)
  const ua = recorder(a)
  a.getText('t').insert(4, ' from a')
  a.getMap('m').set('k', 'a')
  sync(a, b)
  const ub = recorder(b)
  b.getText('t').insert(11, ' then b')
  b.getText('t').delete(4, 3)
  b.getMap('m').set('k', 'b')
  const ub2 = recorder(b)
  b.getText('t').delete(0, 2)
  fixture('pending-dependencies', 'updates whose origins and deletes arrive later (pending structs and delete sets)',
    { t: 'text', m: 'map' },
    { seed, a: Y.mergeUpdates(ua), b: Y.mergeUpdates(ub.slice(0, ub.length - ub2.length)), del: Y.mergeUpdates(ub2) })
}

// 14. A long editing session from a seeded PRNG: three clients insert, delete and format text, set map
// keys and edit an array, syncing now and then; the updates are grouped into twelve pushes.
{
  let seedState = 0x5eed
  const rnd = () => { // mulberry32
    seedState = (seedState + 0x6d2b79f5) | 0
    let t = seedState
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const pick = (n) => Math.floor(rnd() * n)
  const docs = [newDoc(A), newDoc(B), newDoc(C)]
  const all = []
  docs.forEach((d, i) => d.on('update', (u) => all.push(u)))
  const words = ['lorem ', 'ipsum ', 'dolor ', 'sit ', 'amet ', '😀 ', 'x', 'yz ']
  for (let step = 0; step < 400; step++) {
    const d = docs[pick(3)]
    const t = d.getText('t')
    const r = rnd()
    if (r < 0.45 || t.length < 5) {
      t.insert(pick(t.length + 1), words[pick(words.length)])
    } else if (r < 0.7) {
      const at = pick(t.length - 1)
      t.delete(at, 1 + pick(Math.min(8, t.length - at - 1)))
    } else if (r < 0.78) {
      const at = pick(t.length - 2)
      t.format(at, 1 + pick(Math.min(6, t.length - at - 1)), { bold: rnd() < 0.7 ? true : null })
    } else if (r < 0.88) {
      d.getMap('m').set(`k${pick(4)}`, pick(100))
    } else if (r < 0.95) {
      const arr = d.getArray('a')
      if (arr.length > 3 && rnd() < 0.4) arr.delete(pick(arr.length), 1)
      else arr.insert(pick(arr.length + 1), [pick(1000)])
    } else {
      const x = docs[pick(3)]
      if (x !== d) sync(d, x)
    }
  }
  const inputs = {}
  const per = Math.ceil(all.length / 12)
  for (let i = 0; i < 12; i++) inputs[`p${i}`] = Y.mergeUpdates(all.slice(i * per, (i + 1) * per))
  fixture('random-session', 'a 400-step seeded editing session of three clients (text, formatting, map, array) in twelve pushes',
    { t: 'delta', m: 'map', a: 'array' }, inputs, {
      orders: [
        Object.keys(inputs),
        Object.keys(inputs).reverse(),
        ['p3', 'p0', 'p7', 'p1', 'p11', 'p2', 'p5', 'p9', 'p4', 'p10', 'p6', 'p8']
      ]
    })
}

// 16. Seeded random sessions (two to five clients, gc on and off, text with formatting and embeds, maps with
// nested types, subdocuments and binary values, arrays of arrays, XML with formatted text; syncs between
// clients, partial state-vector diffs) pushed in shuffled groups with some dropped and one repeated. These
// seeds are ones in which Yjs's formatting cleanup deletes formatting items.
{
  const session = (seed) => {
    let s = seed * 7919
    const rnd = () => { s = (s + 0x6d2b79f5) | 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296 }
    const pick = (n) => Math.floor(rnd() * n)
    const nc = 2 + pick(3)
    const docs = []
    for (let i = 0; i < nc; i++) { const d = new Y.Doc({ gc: rnd() < 0.8 }); d.clientID = [5, 1001, 2002, 3000000001, 77][i]; docs.push(d) }
    const all = []
    docs.forEach((d) => d.on('update', (u) => all.push(u)))
    const words = ['a', 'bc', 'def ', '😀', 'xyz', 'Q']
    const steps = 20 + pick(120)
    for (let step = 0; step < steps; step++) {
      const d = docs[pick(nc)]
      const r = rnd()
      try {
        d.transact(() => {
          const k = 1 + pick(3)
          for (let j = 0; j < k; j++) {
            const r2 = rnd()
            const t = d.getText('t')
            if (r2 < 0.3 || t.length < 3) t.insert(pick(t.length + 1), words[pick(words.length)], rnd() < 0.2 ? { bold: true } : undefined)
            else if (r2 < 0.45) { const at = pick(t.length - 1); t.delete(at, 1 + pick(Math.min(5, t.length - at - 1))) }
            else if (r2 < 0.52) { const at = pick(t.length - 1); t.format(at, 1 + pick(Math.min(4, t.length - at - 1)), { [rnd() < 0.5 ? 'bold' : 'i']: rnd() < 0.7 ? true : null }) }
            else if (r2 < 0.56) { const m = d.getMap('m'); const v = rnd(); if (v < 0.3) m.set('sub' + pick(2), new Y.Doc({ guid: `sub-${seed}-${step}`, gc: rnd() < 0.5, autoLoad: rnd() < 0.5, meta: rnd() < 0.5 ? { n: pick(3) } : undefined })); else if (v < 0.6) m.set('bin', new Uint8Array([pick(256), pick(256)])); else { const t = d.getText('t'); t.insertEmbed(pick(t.length + 1), { img: 'u' + pick(5), w: rnd() < 0.5 ? pick(100) / 7 : 1e21 }) } }
            else if (r2 < 0.62) { const m = d.getMap('m'); const key = 'k' + pick(3); const v = rnd(); if (v < 0.2) m.delete(key); else if (v < 0.4) { const mm = new Y.Map(); m.set(key, mm); mm.set('x', pick(9)) } else if (v < 0.5) { const tt = new Y.Text(); m.set(key, tt); tt.insert(0, 'in') } else m.set(key, pick(50)) }
            else if (r2 < 0.72) { const m = d.getMap('m'); const v = m.get('k' + pick(3)); if (v instanceof Y.Map) v.set('y' + pick(2), pick(5)); else if (v instanceof Y.Text && v.length > 0) { if (rnd() < 0.5) v.insert(pick(v.length + 1), 'z'); else v.format(0, 1, { b: true }) } }
            else if (r2 < 0.85) { const a = d.getArray('a'); const v = rnd(); if (a.length > 2 && v < 0.35) a.delete(pick(a.length), 1); else if (v < 0.5) { const n = new Y.Array(); a.insert(pick(a.length + 1), [n]); n.push([1, 2]) } else if (v < 0.6 && a.length > 0) { const x = a.get(pick(a.length)); if (x instanceof Y.Array) { if (x.length && rnd() < 0.4) x.delete(0, 1); else x.push(['n']) } } else a.insert(pick(a.length + 1), [pick(100), 'w']) }
            else { const x = d.getXmlFragment('x'); if (x.length > 0 && rnd() < 0.5) { const el = x.get(pick(x.length)); if (el instanceof Y.XmlElement) { const xt = el.get(0); if (xt instanceof Y.XmlText) { if (rnd() < 0.5) xt.insert(pick(xt.length + 1), 'p', rnd() < 0.5 ? { bold: true } : {}); else if (xt.length > 1) xt.format(0, 1 + pick(xt.length - 1), { bold: rnd() < 0.5 ? true : null }) } } else if (rnd() < 0.3) x.delete(pick(x.length), 1) } else { const el = new Y.XmlElement('p'); x.insert(pick(x.length + 1), [el]); const xt = new Y.XmlText(); el.insert(0, [xt]); xt.insert(0, 'para') } }
          }
        })
      } catch (e) { }
      if (rnd() < 0.15) { const x = docs[pick(nc)]; if (x !== d) Y.applyUpdate(x, Y.encodeStateAsUpdate(d, Y.encodeStateVector(x))) }
    }
    // pushes: groups of consecutive updates, shuffled a little, some dropped or duplicated
    const groups = []
    let i = 0
    while (i < all.length) { const n = 1 + pick(Math.max(1, Math.floor(all.length / 4))); groups.push(Y.mergeUpdates(all.slice(i, i + n))); i += n }
    if (rnd() < 0.3) groups.push(Y.encodeStateAsUpdate(docs[pick(nc)]))
    if (rnd() < 0.5) { const x = docs[pick(nc)]; const y = docs[pick(nc)]; groups.push(Y.encodeStateAsUpdate(x, Y.encodeStateVector(y))) }
    if (rnd() < 0.3) { const x = docs[pick(nc)]; const sv = new Map(); for (const [c, k] of Y.decodeStateVector(Y.encodeStateVector(x))) sv.set(c, pick(k + 1)); const enc = new Y.UpdateEncoderV1(); Y.writeStateVector ? 0 : 0; const svb = (() => { const o = [sv.size]; const vu = (n) => { while (n > 127) { o.push(0x80 | (n & 127)); n = Math.floor(n / 128) } o.push(n) }; o.length = 0; vu(sv.size); for (const [c, k] of sv) { vu(c); vu(k) } return new Uint8Array(o) })(); groups.push(Y.encodeStateAsUpdate(x, svb)) }
    const pushes = groups.filter(() => rnd() < 0.9)
    for (let j = pushes.length - 1; j > 0; j--) if (rnd() < 0.5) { const k = pick(j + 1); [pushes[j], pushes[k]] = [pushes[k], pushes[j]] }
    if (pushes.length && rnd() < 0.3) pushes.push(pushes[pick(pushes.length)])
    return pushes
  }
  const sessions = [5080, 5008, 5376, 5384, 5147, 5181].map((seed) => {
    const pushes = session(seed)
    const folds = []
    let stored = null
    for (const p of pushes) { stored = refMerge(stored, p); folds.push(hex(stored)) }
    const pairs = []
    for (let j = 0; j + 1 < pushes.length; j++) pairs.push(hex(refMerge(pushes[j + 1], pushes[j])))
    return { seed, pushes: pushes.map(hex), folds, pairs }
  })
  writeFileSync(join(OUT, 'sessions.json'), JSON.stringify({
    description: 'seeded random editing sessions: the server\'s fold of each push, and each push merged into the next',
    generator: 'src/test/js/yjs-fixtures/generate.mjs with yjs 13.6.33',
    sessions
  }, null, 1) + '\n')
}

console.log('fixtures written to', OUT)

// 15. Hostile input: random byte changes of recorded inputs merged into a fixture's final state, with what
// the reference merger makes of each (its bytes, or that it throws).
{
  let seedState = 0xbad5eed
  const rnd = () => {
    seedState = (seedState + 0x6d2b79f5) | 0
    let t = seedState
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const cases = []
  for (const name of ['text-concurrent-deletes', 'map-edits', 'array-nested', 'overlap-slicing', 'nested-type-deleted', 'formatting']) {
    const f = JSON.parse(readFileSync(join(OUT, `${name}.json`), 'utf8'))
    const stored = Buffer.from(f.final, 'hex')
    const mutations = []
    for (const input of f.inputs) {
      const bytes = Buffer.from(input.bytes, 'hex')
      for (let i = 0; i < 60; i++) {
        const m = Buffer.from(bytes)
        for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256)
        let merged = null
        let error = null
        try {
          merged = hex(refMerge(stored, m))
        } catch (e) {
          error = String(e && e.message ? e.message : e).slice(0, 80)
        }
        mutations.push({ input: input.name, incoming: hex(m), merged, error })
      }
    }
    cases.push({ fixture: name, stored: f.final, mutations })
  }
  writeFileSync(join(OUT, 'mutations.json'), JSON.stringify({
    description: 'random byte changes (1-3 per update) of recorded inputs merged into each fixture\'s final state by the reference merger',
    generator: 'src/test/js/yjs-fixtures/generate.mjs with yjs 13.6.33',
    cases
  }, null, 1) + '\n')
}
