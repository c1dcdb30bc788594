import { Buffer } from 'node:buffer';
import { ServerResponse, STATUS_CODES, validateHeaderName } from 'node:http';

/**
 * A small answer's head and body in one socket write, beneath `ServerResponse` (issue 27).
 * `writeHead` checks every field's name and value against Node's rules on every answer,
 * lowercases each name to look for the few it manages and joins the head field by field, and
 * `end` then writes head and body as two chunks (a `writev`): 9% of a PK lookup's instructions
 * went there beyond what this writer spends. Here the fields every answer carries are checked
 * and joined once (`fixedFields`), an answer's own fields once per value they take
 * (`fieldLine`), and head and body go out as one buffer.
 *
 * It writes what `writeHead` + `end` would write, byte for byte (`response-head.test.ts` checks
 * both side by side): the status line, the fields, `Date`, and `Connection`/`Keep-Alive` by
 * Node's own rules for the request, closing the connection where Node would. The response then
 * runs its usual course (`finish`, keep-alive, pipelined requests) through `end`. Where any of
 * that is not plain (a HEAD request, `Expect`, fields set on the response itself, a field name
 * Node manages, a value Node would refuse), it answers `false` and writes nothing: the caller
 * takes `writeHead` + `end`, which also throws Node's errors.
 *
 * It reads and sets fields of `ServerResponse` that Node does not document (`_header`,
 * `_headerSent`, `_hasBody`, `_last`, `_keepAliveTimeout`, …): Node is pinned by the lockfile
 * (the `node` package), `headWriterWorks` checks at load that they are all there, and the test
 * compares the bytes, so an upgrade that changes them fails a test instead of an answer.
 */

/** The internal fields of a `ServerResponse` this writer reads and sets (Node 24). */
interface ResponseInternals {
  _header: string | null;
  _headerSent: boolean;
  _hasBody: boolean;
  _last: boolean;
  _contentLength: number | null;
  _keepAliveTimeout: number;
  _defaultKeepAlive: boolean;
  _maxRequestsPerSocket: number | undefined;
  _expect_continue: boolean;
  chunkedEncoding: boolean;
  shouldKeepAlive: boolean;
  maxRequestsOnConnectionReached: boolean;
  sendDate: boolean;
}

/** A response to a GET never sent, to read what a fresh `ServerResponse` holds. */
const PROBE = new ServerResponse({
  method: 'GET',
  httpVersionMajor: 1,
  httpVersionMinor: 1,
} as never) as unknown as ResponseInternals & Record<symbol, unknown>;

/** The symbol under which a response keeps fields set on it (`setHeader`), when Node has one. */
const OUT_HEADERS = Object.getOwnPropertySymbols(PROBE).find(
  (symbol) => symbol.description === 'kOutHeaders',
);

/** Whether this Node's `ServerResponse` has every field the writer relies on. */
export const headWriterWorks = ((): boolean => {
  if (!OUT_HEADERS) return false;
  const response = PROBE;
  return (
    response._header === null &&
    response._headerSent === false &&
    response._hasBody === true &&
    response._last === false &&
    response._defaultKeepAlive === true &&
    response._expect_continue === false &&
    response.chunkedEncoding === false &&
    typeof response.shouldKeepAlive === 'boolean' &&
    response.sendDate === true &&
    response[OUT_HEADERS] === null
  );
})();

/** Field names Node manages or reads itself: an answer setting one goes through `writeHead`. */
const NODE_MANAGED = new Set([
  'connection',
  'content-length',
  'keep-alive',
  'transfer-encoding',
  'date',
  'expect',
  'trailer',
  'content-disposition',
]);
/** The one field Node manages that the writer takes, as the number of the body's bytes. */
const CONTENT_LENGTH = 'content-length';
/** Names seen to be tokens and not Node's own; written by our code, so a handful. */
const plainNames = new Set<string>();
const MAX_PLAIN_NAMES = 256;

function isPlainName(name: string): boolean {
  if (plainNames.has(name)) return true;
  try {
    validateHeaderName(name);
  } catch {
    return false;
  }
  if (NODE_MANAGED.has(name.toLowerCase())) return false;
  if (plainNames.size < MAX_PLAIN_NAMES) plainNames.add(name);
  return true;
}

const TAB = 0x09;
const DEL = 0x7f;

/**
 * Whether Node would take `value` as a field value: its strict check (`validateHeaderValue`,
 * a tab or any character from 0x20 to 0xff but DEL), read character by character. Most values
 * an answer carries are short and many are made anew for it (a timing): reading them costs less
 * than hashing them to find them among values seen before, and keeps nothing.
 */
export function isPlainValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 ? code !== TAB : code === DEL || code > 0xff) return false;
  }
  return true;
}

/** `Date: …\r\n` for this second, or undefined once the second is over. */
let dateLine: string | undefined;

/**
 * `Date: …\r\n` for now, made once a second and dropped by a timer at the second's end, as Node
 * caches its own (`utcDate`): an answer reads no clock for it (`Date.now()` is a call into V8's
 * runtime, ~0.15 µs a request on this machine).
 */
function currentDateLine(): string {
  if (dateLine === undefined) {
    const now = Date.now();
    dateLine = `Date: ${new Date(now).toUTCString()}\r\n`;
    setTimeout(forgetDateLine, 1000 - (now % 1000)).unref();
  }
  return dateLine;
}

function forgetDateLine(): void {
  dateLine = undefined;
}

/**
 * Fields every answer of one kind carries (the version, `Vary`, the CORS fields), as name,
 * value, name, value…: checked and joined once, so `endWithHead` copies their lines whole.
 */
export interface FixedFields {
  readonly list: readonly (string | number)[];
  readonly names: ReadonlySet<string>;
  /** `name: value\r\n` each; undefined when one is not plain (those answers take writeHead). */
  readonly lines: string | undefined;
}

/** `list` as `FixedFields`. */
export function fixedFields(list: readonly (string | number)[]): FixedFields {
  const names = new Set<string>();
  let lines: string | undefined = '';
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = list[i] as string;
    const value = list[i + 1] as string | number;
    names.add(name);
    if (lines !== undefined && plainField(name, value)) lines += `${name}: ${value}\r\n`;
    else lines = undefined;
  }
  return { list: list.slice(), names, lines };
}

/** None: an answer whose fields are all its own. */
export const NO_FIXED_FIELDS = fixedFields([]);

/** Whether a field other than Content-Length goes out as it is, as Node would write it. */
function plainField(name: string, value: string | number): boolean {
  return isPlainName(name) && plainValue(value);
}

/** Whether Node takes `value` as a field value (a number: a finite one). */
function plainValue(value: string | number): boolean {
  return typeof value === 'string' ? isPlainValue(value) : Number.isFinite(value);
}

/** The line last written for a field name, and the value it was written for. */
interface LastLine {
  value: string | number;
  line: string;
}

/**
 * The line last written for each field name (names written by our code, so a handful). Most
 * of an answer's fields carry the value they carried in the answer before (a content type, a
 * cache rule: the same string): such a field is checked and joined once, not on every answer.
 */
const lastLines = new Map<string, LastLine>();

/** `name: value\r\n`, or undefined when Node would refuse the field or manages it itself. */
function fieldLine(name: string, value: string | number): string | undefined {
  const last = lastLines.get(name);
  if (last !== undefined && last.value === value) return last.line;
  // A name with a line made before was found plain then: only its new value is checked.
  if (last === undefined ? !plainField(name, value) : !plainValue(value)) return undefined;
  const line = `${name}: ${value}\r\n`;
  if (last !== undefined) {
    last.value = value;
    last.line = line;
  } else if (lastLines.size < MAX_PLAIN_NAMES) lastLines.set(name, { value, line });
  return line;
}

/** A status's reason phrase, and its status line: `HTTP/1.1 <status> <reason>\r\n`. */
interface StatusHead {
  readonly message: string;
  readonly line: string;
}

/**
 * Status heads by status, made on first use: an answer reads its reason phrase here, not from
 * `STATUS_CODES`, an object keyed by numbers whose lookup cost a tenth of this writer's time.
 */
const statusHeads = new Map<number, StatusHead>();

function statusHead(status: number): StatusHead | undefined {
  let head = statusHeads.get(status);
  if (head === undefined) {
    const message = STATUS_CODES[status];
    if (message === undefined) return undefined;
    head = { message, line: `HTTP/1.1 ${status} ${message}\r\n` };
    statusHeads.set(status, head);
  }
  return head;
}

/** The last `Keep-Alive` line made, and what it was made for (one server: always the same). */
let keepAliveLine = '';
let keepAliveFor = -1;
let keepAliveMax: number | undefined;

function keepAliveField(timeoutMs: number, perSocket: number | undefined): string {
  if (timeoutMs !== keepAliveFor || perSocket !== keepAliveMax) {
    const max = perSocket !== undefined && ~~perSocket > 0 ? `, max=${perSocket}` : '';
    keepAliveLine = `Keep-Alive: timeout=${Math.floor(timeoutMs / 1000)}${max}\r\n`;
    keepAliveFor = timeoutMs;
    keepAliveMax = perSocket;
  }
  return keepAliveLine;
}

/**
 * Ends `response` with `status`, the `fixed` fields, then `fields` (name, value, name, value…;
 * a `content-length` among them, matching `body`), and `body`, in one write; false, having
 * written nothing, when the answer is not one it writes (see above).
 */
export function endWithHead(
  response: ServerResponse,
  status: number,
  fixed: FixedFields,
  fields: readonly (string | number)[],
  body: Buffer | string,
): boolean {
  const internal = response as unknown as ResponseInternals & Record<symbol, unknown>;
  if (
    !headWriterWorks ||
    fixed.lines === undefined ||
    internal._header !== null ||
    !internal._hasBody ||
    internal._expect_continue ||
    internal.chunkedEncoding ||
    internal[OUT_HEADERS as symbol] !== null
  )
    return false;
  const statusOf = statusHead(status);
  if (statusOf === undefined) return false;
  const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  let head = statusOf.line + fixed.lines;
  let lengthGiven = false;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string | number;
    if (name === CONTENT_LENGTH) {
      if (value !== bodyBytes || lengthGiven) return false;
      lengthGiven = true;
      head += `${CONTENT_LENGTH}: ${value}\r\n`;
    } else {
      const line = fieldLine(name, value);
      if (line === undefined) return false;
      head += line;
    }
  }
  if (!lengthGiven) return false;
  if (internal.sendDate) head += currentDateLine();
  // Node's keep-alive rule for an answer with a Content-Length (`_storeHeader`): at the last
  // request a socket may carry it says close but leaves the closing to the client.
  if (!internal.shouldKeepAlive) {
    head += 'Connection: close\r\n\r\n';
    internal._last = true;
  } else if (internal.maxRequestsOnConnectionReached) head += 'Connection: close\r\n\r\n';
  else if (internal._keepAliveTimeout && internal._defaultKeepAlive) {
    head += `Connection: keep-alive\r\n${keepAliveField(internal._keepAliveTimeout, internal._maxRequestsPerSocket)}\r\n`;
  } else head += 'Connection: keep-alive\r\n\r\n';
  response.statusCode = status;
  response.statusMessage = statusOf.message;
  internal._contentLength = bodyBytes;
  internal._header = head;
  // The head goes out with the body: `end` must not send it again.
  internal._headerSent = true;
  // Head and body in one buffer: Node writes a buffer from where it lies, where a string would
  // be made one string (the head joined to the body) and copied again to be sent.
  const headBytes = head.length;
  const whole = Buffer.allocUnsafe(headBytes + bodyBytes);
  whole.write(head, 0, headBytes, 'latin1');
  if (typeof body === 'string') whole.write(body, headBytes, bodyBytes, 'utf8');
  else whole.set(body, headBytes);
  response.end(whole);
  return true;
}
