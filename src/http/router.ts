// Hono's own router (SmartRouter: RegExpRouter, else TrieRouter) with the answers for recent
// method-and-path pairs kept. The route table here falls back to TrieRouter (RegExpRouter refuses
// `/v1/invites/accept` beside `/v1/invites/{inviteId}`), which walks its tree on every request;
// a path asked again (the same route and ids) is answered from the map. A match result is the same
// for the same method and path and hono only reads it (RegExpRouter itself hands out one shared
// result per static path), so answers are shared between requests. Bounded: the oldest goes first.
import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

const MAX_KEPT_PATH = 256;

export class RememberingRouter<T> implements Router<T> {
  readonly name = 'RememberingRouter';
  readonly #router: Router<T> = new SmartRouter<T>({ routers: [new RegExpRouter<T>(), new TrieRouter<T>()] });
  readonly #answers = new Map<string, Result<T>>();

  constructor(readonly maxEntries = 1000) {}

  add(method: string, path: string, handler: T): void {
    this.#answers.clear();
    this.#router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    // Ids make paths of a few dozen characters; a longer one (made up, most likely) is not kept.
    if (path.length > MAX_KEPT_PATH) return this.#router.match(method, path);
    const key = `${method} ${path}`;
    let answer = this.#answers.get(key);
    if (answer === undefined) {
      answer = this.#router.match(method, path);
      if (this.#answers.size >= this.maxEntries) this.#answers.delete(this.#answers.keys().next().value!);
      this.#answers.set(key, answer);
    }
    return answer;
  }
}
