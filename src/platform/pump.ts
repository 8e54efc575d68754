// A coalescing work loop: the socket streams and the webhook dispatcher are woken far more often
// than one pass of their work takes. `run()` starts a pass unless one is under way; a call during
// a pass makes one more pass follow it, so no wake-up is lost and passes never overlap.
export class Pump {
  private running = false;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly opts: {
      /** False once the owner has stopped: no pass starts, and none follows. */
      active: () => boolean;
      /** A pass threw; the loop ends until the next `run()`. */
      onError: (error: unknown) => void;
    },
  ) {}

  run(): void {
    if (!this.opts.active()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again && this.opts.active());
      } catch (error) {
        this.opts.onError(error);
      } finally {
        this.running = false;
      }
    })();
  }
}
