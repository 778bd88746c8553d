// A strict little XML reader for checking the JUnit output: it throws on anything that is not
// well-formed (unclosed or mismatched tags, a bare & or <, an unknown entity, unquoted or duplicate
// attributes, characters XML forbids). Enough for test documents; not a general parser.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_][\w.-]*/;
// eslint-disable-next-line no-control-regex -- the control characters XML forbids are what it matches
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function decode(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`bare < in ${where}`);
  return raw.replace(/&([^;]*);|&/g, (m, ent: string | undefined) => {
    if (ent === undefined) throw new Error(`bare & in ${where}`);
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (ent in named) return named[ent]!;
    const num = /^#(x[0-9a-fA-F]+|\d+)$/.exec(ent);
    if (num) return String.fromCodePoint(num[1]!.startsWith('x') ? parseInt(num[1]!.slice(1), 16) : Number(num[1]));
    throw new Error(`unknown entity ${m} in ${where}`);
  });
}

export function parseXml(doc: string): XmlElement {
  if (FORBIDDEN.test(doc)) throw new Error('document holds a character XML forbids');
  let i = 0;
  const rest = () => doc.slice(i);
  const skipSpace = () => {
    while (i < doc.length && /\s/.test(doc[i]!)) i++;
  };
  if (rest().startsWith('<?xml')) {
    const end = doc.indexOf('?>', i);
    if (end < 0) throw new Error('unterminated XML declaration');
    i = end + 2;
  }
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  while (i < doc.length) {
    const lt = doc.indexOf('<', i);
    const textEnd = lt < 0 ? doc.length : lt;
    const text = doc.slice(i, textEnd);
    if (stack.length > 0) stack[stack.length - 1]!.text += decode(text, 'text');
    else if (text.trim() !== '') throw new Error(`text outside the root element: ${JSON.stringify(text.slice(0, 20))}`);
    i = textEnd;
    if (i >= doc.length) break;
    if (doc.startsWith('</', i)) {
      i += 2;
      const m = NAME.exec(rest());
      if (!m) throw new Error('bad closing tag');
      i += m[0].length;
      skipSpace();
      if (doc[i] !== '>') throw new Error(`closing tag ${m[0]} not ended by >`);
      i++;
      const open = stack.pop();
      if (!open || open.name !== m[0]) throw new Error(`closing tag ${m[0]} does not match ${open?.name ?? 'nothing'}`);
      continue;
    }
    i++;
    const m = NAME.exec(rest());
    if (!m) throw new Error(`bad tag at ${i}`);
    i += m[0].length;
    const el: XmlElement = { name: m[0], attrs: {}, children: [], text: '' };
    for (;;) {
      const before = i;
      skipSpace();
      if (doc.startsWith('/>', i) || doc[i] === '>') break;
      if (i === before) throw new Error(`attributes of ${el.name} need white space between them`);
      const a = NAME.exec(rest());
      if (!a) throw new Error(`bad attribute in ${el.name}`);
      i += a[0].length;
      if (doc[i] !== '=') throw new Error(`attribute ${a[0]} of ${el.name} has no value`);
      i++;
      const q = doc[i];
      if (q !== '"' && q !== "'") throw new Error(`attribute ${a[0]} of ${el.name} is not quoted`);
      const end = doc.indexOf(q, i + 1);
      if (end < 0) throw new Error(`attribute ${a[0]} of ${el.name} is not closed`);
      if (a[0] in el.attrs) throw new Error(`duplicate attribute ${a[0]} on ${el.name}`);
      el.attrs[a[0]] = decode(doc.slice(i + 1, end), `attribute ${a[0]}`);
      i = end + 1;
    }
    const selfClosing = doc.startsWith('/>', i);
    i += selfClosing ? 2 : 1;
    if (stack.length > 0) stack[stack.length - 1]!.children.push(el);
    else if (root) throw new Error('more than one root element');
    else root = el;
    if (!selfClosing) stack.push(el);
  }
  if (stack.length > 0) throw new Error(`unclosed element ${stack[stack.length - 1]!.name}`);
  if (!root) throw new Error('no root element');
  return root;
}

export function findAll(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    if (e.name === name) out.push(e);
    e.children.forEach(walk);
  };
  walk(el);
  return out;
}
