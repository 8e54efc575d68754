// The words of the generated workspace (bench/panel-api/workspace.ts): mail that reads like a help
// desk's, with a vocabulary whose frequencies fall off the way real text does, so that a "common"
// word matches a large share of the messages and a "rare" one a handful.

/** mulberry32: a small deterministic generator, so that every build of a size holds the same rows. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const pick = <T>(r: number, xs: readonly T[]): T => xs[Math.floor(r * xs.length)];

/** In most inbound mail (the bench's "common word"). */
export const COMMON_WORD = 'order';
/** In about one conversation in 20,000 (the bench's "rare word"). */
export const RARE_WORD = 'quetzalcoatl';
/** A phrase in about 2 % of the inbound mail. */
export const PHRASE = 'refund the shipping';

const OPENERS = [
  'Hello, I have a question about my order.',
  'Hi team, my order has not arrived yet.',
  'Good morning, I was charged twice for the same order.',
  'Hey, the invoice for my last order shows the wrong address.',
  'Hi, I cannot log in to my account since yesterday.',
  'Hello, could you change the delivery date of my order?',
  'Hi there, the package arrived damaged.',
  'Hello, how do I cancel my subscription?',
];
const MIDDLES = [
  'The tracking page says it is still in the warehouse.',
  'I tried the reset link twice and it expired both times.',
  'Could you please {phrase} costs as promised?',
  'My colleague placed it from the shared account last week.',
  'The item number is {n} and the size is medium.',
  'I attached a photo of the box and the receipt.',
  'We need this sorted before the end of the month.',
  'Your website said delivery within three working days.',
  'I already wrote to your sales address but got no answer.',
  'Is there a discount for annual billing?',
];
const CLOSERS = ['Thanks a lot.', 'Best regards.', 'Kind regards, looking forward to your answer.', 'Cheers.', 'Thank you!'];
const REPLIES = [
  'Thanks for reaching out. I checked your order and it left our warehouse this morning.',
  'Sorry about that! I have issued a refund for the duplicate charge; it shows within five days.',
  'I reset your account; the new link is valid for one hour.',
  'I changed the delivery date as you asked. You will receive a confirmation shortly.',
  'We are sorry the package arrived damaged. A replacement is on its way.',
  'Your subscription is cancelled at the end of the current period.',
  'Annual billing comes with two months free; I can switch you over today.',
];
const NOTES = [
  'Customer is on the enterprise plan, check the contract before refunding.',
  'Escalated to the warehouse lead, waiting for an answer.',
  'Same issue as last week, probably the carrier again.',
  'Refund approved by finance.',
];
export const FIRST_NAMES = ['Ada', 'Ben', 'Cem', 'Deniz', 'Elif', 'Femi', 'Gus', 'Hana', 'Ivan', 'Jin', 'Kara', 'Luis', 'Mia', 'Noor', 'Omar', 'Pia'];
export const LAST_NAMES = ['Aydin', 'Berg', 'Costa', 'Demir', 'Evans', 'Fischer', 'Garcia', 'Huang', 'Ito', 'Jensen', 'Kaya', 'Lopez', 'Moreau', 'Novak'];
export const SUBJECTS = [
  'Where is my order?',
  'Double charge',
  'Wrong invoice address',
  'Cannot log in',
  'Change delivery date',
  'Damaged package',
  'Cancel subscription',
  'Question about billing',
];

/** An inbound mail's text: opener, one or two middle sentences (with the rare word or the phrase now and then), closer. */
export function inboundBody(rand: () => number, n: number): string {
  const parts = [pick(rand(), OPENERS)];
  for (let i = 0; i < 1 + Math.floor(rand() * 2); i++) parts.push(pick(rand(), MIDDLES));
  if (rand() < 0.00005 * 3) parts.push(`It is about the ${RARE_WORD} figurine.`);
  parts.push(pick(rand(), CLOSERS));
  return parts
    .join(' ')
    .replace('{phrase}', PHRASE)
    .replace('{n}', String(100_000 + n));
}

export function replyBody(rand: () => number, name: string): string {
  return `Hi ${name}, ${pick(rand(), REPLIES)} Let me know if there is anything else.`;
}

export function noteBody(rand: () => number): string {
  return pick(rand(), NOTES);
}
