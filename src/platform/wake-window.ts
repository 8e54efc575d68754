// Coalesced wake-ups for pollers that are told "there may be work" far more often than they need to
// look (the job runner and the webhook dispatcher hear of every committed event: under inbound mail,
// every group-commit flush). The first wake-up after a quiet spell looks at once (on the next turn
// of the event loop, so that every wake-up of the same flush is one); later ones wait until
// `windowMs` after the last look and are one look together. A look therefore never comes later
// than one window after the wake-up that asked for it, and a burst costs at most one look per window.
export class WakeWindow {
  private timer: NodeJS.Timeout | undefined;
  private lastLook = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly look: () => void,
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  wake(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastLook + this.windowMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.lastLook = this.now();
      this.look();
    }, wait);
    this.timer.unref();
  }

  /** Drops a wake-up that has not looked yet (the owner stops). */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
