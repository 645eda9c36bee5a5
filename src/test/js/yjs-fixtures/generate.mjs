// Generates the yjs-doc merger fixtures (SPEC §5.10.2) from the real Yjs library.
// Usage (from this directory): npm install && node generate.mjs
// Writes ../../resources/crdt/yjs/<case>.json. The Java tests only read those files; they never run node.
import * as Y from 'yjs'
import { writeFileSync, mkdirSync } from 'node:fs'
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

/** The server's fold: stored = merge(stored, incoming) for each push, starting from the empty doc. */
const fold = (updates) => updates.reduce((acc, u) => Y.mergeUpdates([acc, u]), EMPTY)

/**
 * One fixture: named input updates, each normalized (decoded and written back by Yjs); for every order (all
 * of them up to 4 inputs) Y.mergeUpdates of the whole list and the server's pairwise fold with their bytes
 * and content; the reference merger's apply-and-encode state; and re-delivery of each input into the final
 * state (idempotence).
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
  const expected = merges[0].mergedContent
  if (converges) {
    for (const m of merges) {
      for (const c of [m.mergedContent, m.foldedContent]) {
        if (JSON.stringify(c) !== JSON.stringify(expected)) {
          throw new Error(`${name}: order ${m.order} gives ${JSON.stringify(c)} not ${JSON.stringify(expected)}`)
        }
      }
    }
  }
  // The reference server merger (@syncular/crdt-yjs): apply into a fresh doc, encode the whole state.
  const ref = new Y.Doc()
  for (const n of names) Y.applyUpdate(ref, inputs[n])
  const referenceState = Y.encodeStateAsUpdate(ref)
  ref.destroy()
  const final = Y.mergeUpdates([EMPTY, ...names.map((n) => inputs[n])])
  const redelivered = names.map((n) => {
    const again = Y.mergeUpdates([final, inputs[n]])
    return { input: n, merged: hex(again), content: content(again, roots) }
  })
  // Written-back merges are fixed points: decoding and writing one again gives the same bytes.
  for (const m of merges) {
    for (const b of [m.merged, m.folded]) {
      if (hex(Y.mergeUpdates([EMPTY, Buffer.from(b, 'hex')])) !== b) throw new Error(`${name}: merge is not a fixed point`)
    }
  }
  // Associativity over the first three inputs: (x ⊕ y) ⊕ z against x ⊕ (y ⊕ z).
  const [x, y, z] = names.slice(0, 3).map((n) => inputs[n])
  const assoc = z === undefined ? null : (() => {
    const left = Y.mergeUpdates([Y.mergeUpdates([x, y]), z])
    const right = Y.mergeUpdates([x, Y.mergeUpdates([y, z])])
    return { inputs: names.slice(0, 3), left: hex(left), leftContent: content(left, roots), right: hex(right), rightContent: content(right, roots) }
  })()
  const finalTwice = Y.mergeUpdates([final, final])
  const doc = {
    name,
    description,
    generator: 'src/test/js/yjs-fixtures/generate.mjs with yjs 13.6.33',
    roots,
    inputs: names.map((n) => ({ name: n, bytes: hex(inputs[n]), normalized: hex(Y.mergeUpdates([EMPTY, inputs[n]])), content: content(inputs[n], roots) })),
    expectedContent: expected,
    converges,
    merges,
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

console.log('fixtures written to', OUT)
