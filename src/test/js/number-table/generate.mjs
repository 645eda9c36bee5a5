// Prints the table of src/test/resources/numbers/ecmascript-number-tostring.tsv: one double per line, as its
// IEEE-754 bit pattern (16 lowercase hex digits), a tab, and String(x) as this Node prints it (ECMAScript
// Number::toString). Deterministic: the random rows come from a seeded SplitMix64.
//
//   node src/test/js/number-table/generate.mjs > src/test/resources/numbers/ecmascript-number-tostring.tsv

const view = new DataView(new ArrayBuffer(8));
const bitsOf = (x) => {
  view.setFloat64(0, x);
  return view.getBigUint64(0);
};
const fromBits = (b) => {
  view.setBigUint64(0, BigInt.asUintN(64, b));
  return view.getFloat64(0);
};
const hex = (b) => b.toString(16).padStart(16, '0');

let state = 0x5eed_2024_0043_0003n; // issue 43, item 3
const next = () => {
  state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
  let z = state;
  z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return z ^ (z >> 31n);
};
const below = (n) => Number(next() % BigInt(n));

const rows = [];
const seen = new Set();
const add = (bits) => {
  bits = BigInt.asUintN(64, bits);
  if (seen.has(bits)) return;
  seen.add(bits);
  rows.push(`${hex(bits)}\t${String(fromBits(bits))}`);
};
const addNumber = (x) => add(bitsOf(x));
const neighbours = (x) => {
  const b = bitsOf(x);
  add(b - 1n);
  add(b);
  add(b + 1n);
};

// Named values: zeros, halves, the exponent-form thresholds, the ends of the range, integers near 2^53.
for (const x of [
  0, -0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 0.25, 0.125, 2, 2.0000000000000004, 0.1, 0.2, 0.1 + 0.2, 1 / 3, 2 / 3,
  Math.PI, Math.E, 100, 123.456, -123.456e-10,
  1e21, -1e21, 1e20, 1e21 - 65536 * 2, 999999999999999900000, 123456789012345678901, 1.5e21,
  1e-6, 1e-7, -1e-7, 1.5e-7, 1.234e-6, 9.999999999999999e-7, 0.000001234, 1e-5,
  2 ** 53 - 2, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 53 + 4, -(2 ** 53), 2 ** 54, 2 ** 63, 2 ** 64,
  9007199254740993, 144115188075855877, 2 ** 52 + 0.5, 2 ** 51 + 0.25, 2 ** 50 + 0.25, 2 ** 50 + 0.75,
  Number.MIN_VALUE, -Number.MIN_VALUE, 2 * Number.MIN_VALUE, 3 * Number.MIN_VALUE,
  Number.MAX_VALUE, -Number.MAX_VALUE, Number.EPSILON, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER,
  2 ** -1022, 2.225073858507201e-308, 2.2250738585072014e-308,
  // Java 17's Double.toString is not shortest for some of these (4.9E-324, 9.999999999999999E22 for 1e23)
  2e-3, 1e-3, 1e23, 9.999999999999999e22, 2e23, 8.41e21, 5.0e-324, 1.0e22, 2.82879384806159e17,
  1.18575755e-316, 2.0e-322, 9.4e-323, 1.9400994884341945e25, 5.684341886080802e-14,
  NaN, Infinity, -Infinity,
]) {
  addNumber(x);
}

// Ties at the last digit: 2^j + f with a short binary fraction f, where rounding half-up and half-even can
// disagree (2^50 + 0.25 prints 1125899906842624.2).
for (let j = 36; j <= 52; j++) {
  for (const f of [0.5, 0.25, 0.75, 0.125, 0.375, 0.625, 0.875, 0.0625, 0.1875]) {
    addNumber(2 ** j + f);
    addNumber(-(2 ** j + f));
  }
}

// Every power of two (the asymmetric rounding interval at the bottom of a binade) and its neighbours every
// eighth exponent.
for (let j = -1074; j <= 1023; j++) {
  if (j % 8 === 0) neighbours(2 ** j);
  else addNumber(2 ** j);
}

// The double nearest every power of ten, with its neighbours.
for (let j = -323; j <= 308; j++) neighbours(Number(`1e${j}`));

// Random rows: bit patterns over the whole range, moderate magnitudes, short decimals, integers near 2^53.
for (let i = 0; i < 2000; i++) add(next());
for (let i = 0; i < 1000; i++) {
  const exponent = BigInt(1023 - 40 + below(120)); // 2^-40 .. 2^80
  add((exponent << 52n) | (next() & ((1n << 52n) - 1n)) | (below(2) ? 1n << 63n : 0n));
}
for (let i = 0; i < 1000; i++) {
  const digits = String(1 + below(999999999)).slice(0, 1 + below(9));
  addNumber(Number(`${digits}e${below(60) - 30}`));
}
for (let i = 0; i < 500; i++) {
  addNumber(2 ** 53 + (below(2) ? 1 : -1) * below(1 << 20));
  addNumber(Number(BigInt(2 ** 53) * BigInt(1 + below(200000))));
}
for (let i = 0; i < 200; i++) add(0x000fffffffffffffn & next()); // subnormals

process.stdout.write(rows.join('\n') + '\n');
