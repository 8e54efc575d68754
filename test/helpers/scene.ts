// What the tests of one file share (a server, fakes, fixtures), started once for them.
import { after, before } from 'node:test';

/**
 * Called inside a `describe`: `start` runs before its tests and `stop` after them, given what `start`
 * made (undefined when it failed). The function returned gives a test the scene; a `before`
 * registered after this call runs after `start`, so it can build on the scene.
 */
export function sceneOf<T>(start: () => Promise<T>, stop: (scene: T | undefined) => Promise<void>): () => T {
  let scene: T | undefined;
  before(async () => {
    scene = await start();
  });
  after(() => stop(scene));
  return () => {
    if (scene === undefined) throw new Error('the scene did not start');
    return scene;
  };
}
