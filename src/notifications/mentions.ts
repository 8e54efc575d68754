// Who a note mentions. `@` followed by a member's display name or the local part of their e-mail
// address, ignoring case (I, ı and İ all count as i), names a member; the `@` must start the text
// or follow a character that is not a letter, digit or one of `._-` (so `me@shop.example` mentions
// nobody), and the name must end at the end of the text or before such a character. A display name may hold spaces
// (`@Ayşe Yılmaz`); when several names fit at one `@`, the longest wins (`@Ann Lee` over `@Ann`).

export interface Mentionable {
  personId: string;
  email: string;
  name: string | null;
}

const WORD = /[\p{L}\p{N}._-]/u;

/** Lower case that also treats Turkish dotted and dotless i alike (`@AYŞE YILMAZ` is Ayşe Yılmaz). */
function fold(text: string): string {
  return text.replace(/[Iıİ]/g, 'i').toLocaleLowerCase('und');
}

/** The names a member answers to, folded: display name and e-mail local part. */
function handles(m: Mentionable): string[] {
  const out = [fold(m.email.split('@')[0])];
  const name = m.name?.trim();
  if (name) out.push(fold(name.replace(/\s+/g, ' ')));
  return out.filter((h) => h.length > 0);
}

/** The members a text mentions, in the order of their first mention. */
export function mentionedMembers<M extends Mentionable>(text: string, members: readonly M[]): M[] {
  const folded = fold(text.replace(/\s+/g, ' '));
  const candidates = members.flatMap((m) => handles(m).map((h) => ({ m, h }))).sort((a, b) => b.h.length - a.h.length);
  const found: M[] = [];
  for (let i = folded.indexOf('@'); i !== -1; i = folded.indexOf('@', i + 1)) {
    if (i > 0 && WORD.test(folded[i - 1])) continue;
    const rest = folded.slice(i + 1);
    const hit = candidates.find(({ h }) => rest.startsWith(h) && (rest.length === h.length || !WORD.test(rest[h.length])));
    if (hit && !found.includes(hit.m)) found.push(hit.m);
  }
  return found;
}
