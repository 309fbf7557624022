/**
 * A port of Kubernetes `resource.Quantity` (k8s.io/apimachinery/pkg/api/resource, v0.34.4, the version
 * the kube-apiserver of this project is built from). Values are exact: a bigint count of nano-units
 * (10^-9). Every value Go can produce through parsing or integer arithmetic is a whole number of
 * nano-units, because ParseQuantity rounds finer values up (away from zero) to 1n.
 *
 * Deliberate differences from Go, all in cases where Go overflows, hangs or prints a wrong number:
 * - value()/milliValue()/scaledValue() return exact bigints; Go wraps silently beyond int64.
 *   Negative values round away from zero, as Go's int64 representation does (-1.5 -> -2); Go's
 *   inf.Dec representation has bugs there (Value() of "-1.1Ki" is -1125, of "-1n" is +1).
 * - A DecimalSI value with a base-10 exponent above 18 prints in exponent form ("1000E" -> "1e21",
 *   as newer apimachinery does); v0.34.4 drops the exponent and prints "1".
 * - A BinarySI value of 1024^7 or more (only reachable through arithmetic: parsing caps binary values
 *   at 2^63-1) keeps "Ei" as its largest suffix ("1024Ei"); Go prints "1".
 * - An exponent outside int32 is rejected (Go wraps it, and "1e2147483648" hangs Go), and so is a
 *   quantity whose magnitude is 10^1000 or more (Go would build a huge number; we refuse instead).
 */

/** The three ways a quantity is printed; parsing takes it from the suffix, like Go. */
export type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export type QuantityErrorReason = 'empty' | 'format' | 'suffix' | 'numeric' | 'range';

/** Thrown by `Quantity.parse`; the message names the input and what is wrong with it. */
export class QuantityError extends Error {
  override readonly name = 'QuantityError';

  constructor(
    readonly input: string,
    readonly reason: QuantityErrorReason,
    detail: string,
  ) {
    super(`invalid quantity ${JSON.stringify(input)}: ${detail}`);
  }
}

const SUFFIX_HINT =
  '(expected a number followed by one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or e<exponent>)';

/** Largest supported magnitude, as a power of ten: |value| < 10^MAX_ORDER. */
const MAX_ORDER = 1000;
const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const NANO = 1_000_000_000n;
/** Go caps parsed BinarySI quantities at 2^63-1 (`maxAllowed`). */
const MAX_BINARY_NANOS = INT64_MAX * NANO;

const DECIMAL_SUFFIXES: ReadonlyMap<number, string> = new Map([
  [-9, 'n'],
  [-6, 'u'],
  [-3, 'm'],
  [0, ''],
  [3, 'k'],
  [6, 'M'],
  [9, 'G'],
  [12, 'T'],
  [15, 'P'],
  [18, 'E'],
]);
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

interface Suffix {
  readonly base: 2 | 10;
  readonly exponent: number;
  readonly format: Format;
}

const KNOWN_SUFFIXES: ReadonlyMap<string, Suffix> = new Map<string, Suffix>([
  ...[...DECIMAL_SUFFIXES].map(
    ([exponent, s]) => [s, { base: 10, exponent, format: 'DecimalSI' }] as [string, Suffix],
  ),
  ...BINARY_SUFFIXES.slice(1).map(
    (s, i) => [s, { base: 2, exponent: 10 * (i + 1), format: 'BinarySI' }] as [string, Suffix],
  ),
]);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const SUFFIX_LETTERS = 'eEinumkKMGTP';

interface Scanned {
  readonly positive: boolean;
  /** Sign, digits and point, as Go hands it to inf.Dec.SetString. */
  readonly value: string;
  /** Integer digits without leading zeros, "0" if there were none. */
  readonly num: string;
  /** Fraction digits, possibly empty. */
  readonly denom: string;
  readonly suffix: string;
}

/** Port of Go's parseQuantityString; returns the offending index when the string is malformed. */
function scanQuantityString(
  str: string,
): Scanned | { readonly badIndex: number; readonly suffixStart: number } {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (pos < end) {
    if (str[0] === '-') {
      positive = false;
      pos++;
    } else if (str[0] === '+') {
      pos++;
    }
  }
  // strip leading zeros
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  // the numerator
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, value: str, num, denom: '', suffix: '' };
  pos = i;
  if (num.length === 0) num = '0';

  // the denominator ("1." and ".5" are both fine, as in Go)
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);

  // the suffix: letters, then an optional sign, then digits
  const suffixStart = pos;
  i = pos;
  while (i < end && SUFFIX_LETTERS.includes(str[i] as string)) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  return { badIndex: i, suffixStart };
}

/** Port of the suffixer's interpret, plus an int32 range check on exponents (Go wraps them). */
function interpretSuffix(input: string, suffix: string): Suffix {
  const known = KNOWN_SUFFIXES.get(suffix);
  if (known) return known;
  if (
    suffix.length > 1 &&
    (suffix[0] === 'e' || suffix[0] === 'E') &&
    /^[+-]?[0-9]+$/.test(suffix.slice(1))
  ) {
    const exponent = BigInt(suffix.slice(1));
    if (exponent < INT64_MIN || exponent > INT64_MAX) {
      // strconv.ParseInt fails, so Go reports an unknown suffix
      throw new QuantityError(input, 'suffix', `exponent ${JSON.stringify(suffix)} does not fit in 64 bits`);
    }
    if (exponent < INT32_MIN || exponent > INT32_MAX) {
      throw new QuantityError(input, 'range', `exponent ${JSON.stringify(suffix)} is out of range`);
    }
    return { base: 10, exponent: Number(exponent), format: 'DecimalExponent' };
  }
  throw new QuantityError(input, 'suffix', `unknown suffix ${JSON.stringify(suffix)} ${SUFFIX_HINT}`);
}

/** ceil(n / d) rounded away from zero, for d > 0. */
function divAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (n % d === 0n) return q;
  return n > 0n ? q + 1n : q - 1n;
}

/** `digits` (no sign) with the decimal point after `point` digits, as nano-units rounded up. */
function decimalDigitsToNanos(digits: string, point: number): bigint {
  const cut = point + 9;
  if (cut <= 0) return /[1-9]/.test(digits) ? 1n : 0n;
  if (cut >= digits.length) return BigInt(digits + '0'.repeat(cut - digits.length));
  const sticky = /[1-9]/.test(digits.slice(cut)) ? 1n : 0n;
  return BigInt(digits.slice(0, cut)) + sticky;
}

function formatError(input: string, badIndex: number, suffixStart: number): QuantityError {
  const bad = input[badIndex] as string;
  if (/\s/.test(input)) return new QuantityError(input, 'format', 'must not contain whitespace');
  if (input[suffixStart] === '.')
    return new QuantityError(input, 'format', 'has more than one decimal point');
  if (!/[0-9.]/.test(input.slice(0, suffixStart))) {
    return new QuantityError(input, 'format', `must start with a number ${SUFFIX_HINT}`);
  }
  const suffix = input.slice(suffixStart);
  return new QuantityError(
    input,
    'format',
    `unknown suffix ${JSON.stringify(suffix)}: unexpected ${JSON.stringify(bad)} at offset ${badIndex} ${SUFFIX_HINT}`,
  );
}

/**
 * Quantities parsed before, by input string. Statuses and bindings repeat a few strings ("100m",
 * "1Gi") thousands of times per reconcile, and a Quantity is immutable, so one can be shared.
 * Emptied when full rather than evicted one by one: a working set this size fits many times over.
 * Only short texts are kept: a valid quantity can be any length ("000...1"), and long keys would cost
 * memory and, past 16 Ki characters, V8's string hashing (one bucket per length).
 */
const parsedBefore = new Map<string, Quantity>();
const PARSED_KEPT = 10_000;
const PARSED_KEPT_LENGTH = 32;

export class Quantity {
  /**
   * Go's cached string: ParseQuantity keeps the input verbatim when it looks canonical, and
   * String()/MarshalJSON then return it as is. A #private field, so jest's toEqual compares
   * quantities by value and format only.
   */
  readonly #s: string | undefined;
  /** toCanonicalString's result, once asked for. */
  #canonical: string | undefined;

  /** `nanos` is the exact value in units of 10^-9. */
  private constructor(
    private readonly nanos: bigint,
    private readonly fmt: Format,
    s?: string,
  ) {
    this.#s = s;
  }

  /** Port of Go's ParseQuantity. Throws QuantityError. Does not trim whitespace (Go doesn't either). */
  static parse(str: string): Quantity {
    if (typeof str !== 'string') {
      throw new QuantityError(String(str), 'format', `expected a string, got ${typeof str}`);
    }
    if (str.length === 0) throw new QuantityError(str, 'empty', 'empty string');
    if (str.length > PARSED_KEPT_LENGTH) return Quantity.parseUncached(str);
    let parsed = parsedBefore.get(str);
    if (parsed === undefined) {
      parsed = Quantity.parseUncached(str);
      if (parsedBefore.size >= PARSED_KEPT) parsedBefore.clear();
      parsedBefore.set(str, parsed);
    }
    return parsed;
  }

  private static parseUncached(str: string): Quantity {
    if (str === '0') return new Quantity(0n, 'DecimalSI', str);

    const scanned = scanQuantityString(str);
    if ('badIndex' in scanned) throw formatError(str, scanned.badIndex, scanned.suffixStart);
    const { positive, value, num, denom } = scanned;
    const { base, exponent, format: suffixFormat } = interpretSuffix(str, scanned.suffix);
    let format = suffixFormat;

    // Go's int64 fast path; it decides whether the input string is cached as the canonical form.
    let precision: number;
    let scale: number;
    if (base === 10) {
      scale = exponent - denom.length;
      precision = 18 - (num.length + denom.length);
    } else {
      scale = 0;
      precision = denom.length === 0 ? 14 - num.length - (exponent * 3) / 10 : -1;
    }
    let fastPath = false;
    let cached: string | undefined;
    if (precision >= 0 && scale >= -9) {
      const shifted = num + denom;
      const parsed = BigInt(shifted);
      if (base === 10) {
        fastPath = true;
        if (scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') cached = str;
      } else if (parsed << BigInt(exponent) <= INT64_MAX) {
        fastPath = true;
        if ((parsed & 7n) !== 0n) cached = str;
      }
    }
    // Go's slow path hands `value` to inf.Dec.SetString, which wants at least one digit.
    if (!fastPath && !/[0-9]/.test(value)) {
      throw new QuantityError(str, 'numeric', 'has no digits before its suffix');
    }

    const digits = num + denom;
    const significant = digits.replace(/^0+/, '');
    let nanos: bigint;
    if (significant.length === 0) {
      nanos = 0n;
    } else if (base === 10) {
      const order = significant.length + exponent - denom.length;
      if (order > MAX_ORDER) {
        throw new QuantityError(str, 'range', `magnitude is 10^${MAX_ORDER} or more, which is not supported`);
      }
      nanos = decimalDigitsToNanos(digits, num.length + exponent);
    } else if (significant.length - denom.length > 20) {
      nanos = MAX_BINARY_NANOS; // at least 10^20, far beyond the cap
    } else if (significant.length - denom.length < -40) {
      nanos = 1n; // below 10^-40 * 2^60, so below 1n: rounds up to 1n
    } else {
      const scaled = (BigInt(digits) << BigInt(exponent)) * NANO;
      nanos = divAwayFromZero(scaled, 10n ** BigInt(denom.length));
    }
    if (base === 2 && !fastPath) {
      if (nanos > MAX_BINARY_NANOS) nanos = MAX_BINARY_NANOS;
      if (nanos > 0n && nanos < NANO) format = 'DecimalSI';
    }
    return new Quantity(positive ? nanos : -nanos, format, cached);
  }

  /** Go's NewQuantity: an integer value. */
  static fromInt(value: bigint, format: Format = 'DecimalSI'): Quantity {
    return new Quantity(value * NANO, format);
  }

  /** Go's NewMilliQuantity: value * 10^-3. */
  static fromMilli(value: bigint, format: Format = 'DecimalSI'): Quantity {
    return new Quantity(value * 1_000_000n, format);
  }

  /** Go's NewScaledQuantity: value * 10^scale in DecimalSI; scale is an integer from -9 (nano) up. */
  static fromScaled(value: bigint, scale: number): Quantity {
    if (!Number.isInteger(scale) || scale < -9 || scale > MAX_ORDER) {
      throw new RangeError(`scale must be an integer from -9 to ${MAX_ORDER}, got ${scale}`);
    }
    return new Quantity(value * 10n ** BigInt(scale + 9), 'DecimalSI');
  }

  /** Exact nano-units (value * 10^9); the inverse of `fromNano`. */
  static fromNano(nanos: bigint, format: Format = 'DecimalSI'): Quantity {
    return new Quantity(nanos, format);
  }

  static zero(format: Format = 'DecimalSI'): Quantity {
    return new Quantity(0n, format);
  }

  get format(): Format {
    return this.fmt;
  }

  /** The same value printed in another format (Go lets callers set Format at will). */
  withFormat(format: Format): Quantity {
    return format === this.fmt ? this : new Quantity(this.nanos, format);
  }

  /**
   * Go's String(): the parsed input verbatim when Go's parser cached it (it looked canonical, e.g.
   * "100m", "1Ki", but also "+1", "0001", "1.123k", "1E-3"), otherwise `toCanonicalString()`.
   * This is also what Kubernetes serializes (MarshalJSON uses the same cached string).
   */
  toString(): string {
    return this.#s ?? this.toCanonicalString();
  }

  toJSON(): string {
    return this.toString();
  }

  /** Go's CanonicalizeBytes: the canonical form, ignoring any cached input string. */
  toCanonicalString(): string {
    this.#canonical ??= this.formatCanonical();
    return this.#canonical;
  }

  private formatCanonical(): string {
    const nanos = this.nanos;
    if (nanos === 0n) return '0';
    let format = this.fmt;
    if (format === 'BinarySI') {
      if ((nanos > -1024n * NANO && nanos < 1024n * NANO) || nanos % NANO !== 0n) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let amount = nanos / NANO;
      let exponent = 0;
      while (exponent < BINARY_SUFFIXES.length - 1 && amount % 1024n === 0n) {
        amount /= 1024n;
        exponent++;
      }
      return `${amount}${BINARY_SUFFIXES[exponent]}`;
    }
    // Move every factor of ten into the exponent, then lower the exponent to a multiple of three.
    const negative = nanos < 0n;
    const raw = (negative ? -nanos : nanos).toString();
    const trimmed = raw.replace(/0+$/, '');
    let exponent = -9 + (raw.length - trimmed.length);
    const shift = ((exponent % 3) + 3) % 3;
    exponent -= shift;
    const mantissa = (negative ? '-' : '') + trimmed + '0'.repeat(shift);
    let suffix: string | undefined;
    if (format === 'DecimalSI') suffix = DECIMAL_SUFFIXES.get(exponent);
    if (suffix === undefined) suffix = exponent === 0 ? '' : `e${exponent}`;
    return mantissa + suffix;
  }

  /** The exact value in nano-units (10^-9). */
  nanoValue(): bigint {
    return this.nanos;
  }

  /** Go's Value(): the integer value, rounded up away from zero (1.1 -> 2, -1.1 -> -2). Never wraps. */
  value(): bigint {
    return divAwayFromZero(this.nanos, NANO);
  }

  /** Go's MilliValue(): value * 1000, rounded up away from zero. Never wraps. */
  milliValue(): bigint {
    return divAwayFromZero(this.nanos, 1_000_000n);
  }

  /** Go's ScaledValue(scale): value / 10^scale, rounded up away from zero; scale is an integer >= -9. */
  scaledValue(scale: number): bigint {
    if (!Number.isInteger(scale) || scale < -9) {
      throw new RangeError(`scale must be an integer >= -9, got ${scale}`);
    }
    return divAwayFromZero(this.nanos, 10n ** BigInt(scale + 9));
  }

  isZero(): boolean {
    return this.nanos === 0n;
  }

  sign(): -1 | 0 | 1 {
    return this.nanos === 0n ? 0 : this.nanos < 0n ? -1 : 1;
  }

  cmp(other: Quantity): -1 | 0 | 1 {
    return this.nanos === other.nanos ? 0 : this.nanos < other.nanos ? -1 : 1;
  }

  /** Go's Equal: same value, whatever the format. */
  equals(other: Quantity): boolean {
    return this.nanos === other.nanos;
  }

  /** Go's Add: keeps this format, unless this is zero, in which case it takes other's format. */
  add(other: Quantity): Quantity {
    return new Quantity(this.nanos + other.nanos, this.nanos === 0n ? other.fmt : this.fmt);
  }

  /** Go's Sub: keeps this format, unless this is zero, in which case it takes other's format. */
  sub(other: Quantity): Quantity {
    return new Quantity(this.nanos - other.nanos, this.nanos === 0n ? other.fmt : this.fmt);
  }

  /** Go's Mul by an integer; keeps the format. */
  mul(factor: bigint): Quantity {
    return new Quantity(this.nanos * factor, this.fmt);
  }

  /** Go's Neg; keeps the format. */
  neg(): Quantity {
    return new Quantity(-this.nanos, this.fmt);
  }
}
