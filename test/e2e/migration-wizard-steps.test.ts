// The migration wizard (Settings › Move to the service) in a real browser against a real Dovecot
// holding a generated mailbox (the scene: test/helpers/migration-wizard.ts): the whole wizard from
// the address to completed (a wrong password first, folders, an e-mail channel created inline, the
// dry run, start, live progress of a batch, pause, resume, a reload mid-copy, live progress to
// switching, the forwarding confirmation and the test message arriving live, the quiet-period
// countdown, finish), then remove history with a wrong and then the right number. The background
// work runs when the test drains it, so every state can be looked at as it is.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Response } from 'playwright-core';
import type { MigrationPart } from '../../src/mailbox-migration/background.js';
import { assertAccessible, browserSkipReason, screenshot } from '../helpers/browser.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { ingressPort, sendToIngress } from '../helpers/mail.js';
import { buildMail } from '../helpers/mailbox.js';
import { fillOldMailbox, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { FORWARDING_DOMAIN, startWizardScene, type WizardScene } from '../helpers/migration-wizard.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('the migration wizard in a browser, step by step', { skip: browserSkipReason() ?? dovecotMissing }, () => {
  let scene: WizardScene;
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let api: WizardScene['api'];
  let panelPage: WizardScene['panelPage'];
  let expectScreen: WizardScene['expectScreen'];
  const now = new Date();

  before(async () => {
    scene = await startWizardScene({ users: [SUPPORT], prepare: ({ d, ownerEmail }) => fillOldMailbox(d, now, { ownerEmail, bigBytes: 250_000 }) });
    ({ d, s, seed, sink, api, panelPage, expectScreen } = scene);
  });
  after(() => scene?.stop());

  const drain = () => s.app.jobs.drain();
  /** One run of the background work: one batch of the copy. */
  const drain1 = () => s.app.jobs.drain(1);

  test('the whole wizard, from the address to completed, then remove history with a wrong and the right number', async () => {
    const untouched = d.snapshot(SUPPORT);
    const { page, errors } = await panelPage(seed.ownerToken);
    await page.goto(`${s.url}/settings`);
    await page.getByRole('link', { name: 'Move to the service' }).click();
    await page.getByRole('heading', { name: 'Move to the service' }).waitFor();
    await page.getByText('No migrations yet').waitFor();
    await assertAccessible(page);

    // 1. Source: the provider is looked for; nothing is read.
    await page.getByRole('link', { name: 'New migration' }).click();
    await page.getByText('Nothing is read from the mailbox yet').waitFor();
    await page.getByLabel('Mailbox address').fill(SUPPORT);
    await page.getByRole('button', { name: 'Find provider' }).click();
    await page.getByTestId('detected').getByText('The provider was not recognised').waitFor();
    await page.getByLabel('Provider').selectOption('imap');
    await page.getByLabel('Server name').fill('127.0.0.1');
    await page.getByLabel('Port').fill(String(d.port));
    await page.getByLabel('Security').selectOption('none');
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-1-source');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/settings\/migrations\/mig_/);
    const id = new URL(page.url()).pathname.split('/').pop()!;

    // 2. Connect: a wrong password says which step failed; the field is never filled back in.
    await expectScreen(page, id, 'draft');
    await page.getByLabel('App password').fill('not-the-password');
    await page.getByRole('button', { name: 'Save and test' }).click();
    await page.getByText('The test failed at: Signing in').waitFor();
    assert.equal(await page.getByLabel('App password').inputValue(), '');
    assert.equal(await page.locator('.mig-actions [data-action="folders"]').count(), 0, 'no "Choose folders" that would lead nowhere after a failed sign-in');
    await page.getByLabel('App password').fill(SUPPORT_PASSWORD);
    await page.getByRole('button', { name: 'Save and test' }).click();
    await page.getByText('Connected. The folders were listed').waitFor();
    await expectScreen(page, id, 'connected');
    assert.equal(await page.getByLabel('App password').inputValue(), '');
    assert.ok(!(await page.content()).includes(SUPPORT_PASSWORD), 'the password is nowhere on the page');
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-2-connect');

    // 3. Choose: folders with counts; spam, trash and drafts greyed with why.
    await page.getByRole('link', { name: 'Next: choose folders' }).click();
    const junk = page.locator('.mig-folder', { hasText: 'Junk' });
    await junk.getByText('Never read').waitFor();
    assert.equal(await junk.getByRole('checkbox').isDisabled(), true);
    assert.equal(await page.locator('.mig-folder', { hasText: 'INBOX' }).getByRole('checkbox').isChecked(), true);
    await page.locator('.mig-folder', { hasText: 'INBOX' }).getByText('10 messages').waitFor();
    await page.locator('.mig-folder', { hasText: 'Archive' }).getByRole('checkbox').check();
    assert.equal(await page.locator('.mig-actions [data-action="folders"]').count(), 0, 'no "Choose folders" on the Choose step itself');
    // INBOX, then Sent, then the rest alphabetically; the folders never read (spam, trash, drafts) last.
    const order = await page.locator('.mig-folder .mono').allInnerTexts();
    const never = await page.locator('.mig-folder.never .mono').allInnerTexts();
    assert.equal(order[0], 'INBOX', order.join(', '));
    assert.deepEqual(
      order.slice(order.length - never.length),
      [...never].sort((a, b) => a.localeCompare(b)),
      order.join(', '),
    );
    const middle = order.slice(1, order.length - never.length).filter((f) => f !== 'Sent');
    assert.deepEqual(
      middle,
      [...middle].sort((a, b) => a.localeCompare(b)),
      order.join(', '),
    );
    if (order.includes('Sent')) assert.equal(order[1], 'Sent', order.join(', '));
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-3-choose');
    await page.getByRole('button', { name: 'Next: map' }).click();

    // 4. Map: the inbox has no e-mail channel yet: one is made inline.
    await page.getByText('This inbox has no e-mail channel yet').waitFor();
    await page.locator('#mig-ch-name').fill('Support mail');
    assert.equal(await page.locator('#mig-ch-address').inputValue(), SUPPORT);
    await page.getByRole('button', { name: 'Create e-mail channel' }).click();
    await page.getByLabel('E-mail channel').locator('option', { hasText: SUPPORT }).waitFor({ state: 'attached' });
    await page.getByLabel(`Member for ${SUPPORT}`).selectOption(seed.ownerId);
    await page.getByLabel('Label for Archive').fill('archived');
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-4-map');
    await page.getByRole('button', { name: 'Next: review the dry run' }).click();

    // 5. Review: the dry run once the headers are read (live), as the API plans it.
    await page.getByText('Reading the headers').waitFor();
    await expectScreen(page, id, 'scanning');
    await drain();
    const ready = await expectScreen(page, id, 'ready');
    assert.ok(ready.channel_id, 'the inline channel was chosen');
    assert.deepEqual(ready.team_members, { [SUPPORT]: seed.ownerId });
    const totals = page.getByTestId('totals');
    assert.equal(await totals.locator('dt:has-text("Messages in the folders") + dd').innerText(), String(ready.plan.summary.total));
    assert.equal(await totals.locator('dt:has-text("To copy") + dd').innerText(), String(ready.plan.summary.to_copy));
    assert.equal(await totals.locator('dt:has-text("Conversations") + dd').innerText(), String(ready.plan.summary.conversations));
    await page.getByText('Why messages are skipped').waitFor();
    await page.getByRole('list').getByText('Printer on fire').first().waitFor();
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-5-review');

    // 6. Copy: start; one batch of two conversations shows live from migration.progress alone (the
    // page reads nothing); pause, resume, a reload mid-copy, then live progress to switching.
    Object.assign((s.server.parts['mailbox-migration'] as MigrationPart).worker.limits, { budgetMs: 0, batchThreads: 2 });
    await page.getByRole('button', { name: 'Start copying' }).click();
    // A confirmation that states the plan's counts first.
    const confirm = page.getByRole('dialog', { name: 'Start copying' });
    const counts = new RegExp(`Copy ${ready.plan.summary.to_copy} messages? from \\d+ folders? into ${ready.plan.summary.conversations} conversations?\\?`);
    await confirm.getByText(counts).waitFor();
    // Keeping the mailbox read live afterwards: offered, on by default (the channel can read it).
    const keepLabel = 'Keep reading this mailbox live in Support mail after the move';
    assert.equal(await confirm.getByRole('checkbox', { name: keepLabel, exact: true }).isChecked(), true);
    await screenshot(page, 'migration-wizard-6-start-confirm');
    await confirm.getByRole('button', { name: 'Start copying' }).click();
    const copying = await expectScreen(page, id, 'copying');
    assert.equal(copying.keep_reading.on, true, 'the start saved the choice');
    await page.getByText('No changes were made to the provider.').waitFor();
    // The page re-reads the migration after the start's migration.updated: let that settle first.
    await page.waitForTimeout(1000);
    const reads: number[] = [];
    const countReads = async (r: Response) => {
      if (r.request().method() === 'GET' && new URL(r.url()).pathname === `/v1/migrations/${id}`)
        reads.push(((await r.json()) as { progress: { copied: number } }).progress.copied);
    };
    page.on('response', countReads);
    // (another due job may take the first run)
    let partly = (await api('GET', `/v1/migrations/${id}`)).body;
    for (let run = 0; run < 3 && partly.progress.copied === 0; run++) {
      await drain1();
      partly = (await api('GET', `/v1/migrations/${id}`)).body;
    }
    assert.equal(partly.state, 'copying');
    assert.ok(partly.progress.copied > 0 && partly.progress.planned > 0, JSON.stringify(partly.progress));
    await page.getByTestId('copied').getByText(String(partly.progress.copied), { exact: true }).waitFor();
    await page.getByTestId('progress-text').getByText(`${partly.progress.percent}% · ${partly.progress.copied} of`).waitFor();
    page.off('response', countReads);
    assert.deepEqual(
      reads.filter((copied) => copied > 0),
      [],
      'the progress came from migration.progress, not from reading the migration',
    );
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expectScreen(page, id, 'paused');
    await page.getByText('Paused. Resume continues where it stopped.').waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await expectScreen(page, id, 'copying');
    await page.reload();
    await expectScreen(page, id, 'copying');
    await page.getByRole('progressbar', { name: 'Copy progress' }).waitFor();
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-6-copy');
    // Meanwhile every member who sees the inbox sees the banner.
    await page.goto(`${s.url}/conversations`);
    await page.getByText(/Mail history is being copied into/).waitFor();
    await page.goto(`${s.url}/settings/migrations/${id}`);
    await expectScreen(page, id, 'copying');
    await drain();
    const syncing = await expectScreen(page, id, 'syncing');
    assert.equal(syncing.progress.percent, 100);
    await page.getByTestId('progress-text').getByText(`100% · ${syncing.progress.copied} of`).waitFor();

    // 7. Switch: the forwarding address; a provider's confirmation code appears live.
    const forwarding = syncing.routing.forwarding_address as string;
    assert.ok(forwarding.endsWith(`@${FORWARDING_DOMAIN}`));
    assert.equal(await page.getByLabel('Forwarding address').first().inputValue(), forwarding);
    const confirmation = await buildMail({
      from: 'Mail Team <forwarding-noreply@google.com>',
      to: forwarding,
      subject: `(#482913377) Forwarding Confirmation - Receive Mail from ${SUPPORT}`,
      date: new Date(),
      text: `${SUPPORT} has requested to automatically forward mail to ${forwarding}.\nConfirmation code: 482913377\n\nhttps://mail-settings.example.com/mail/vf-abc-confirm\n`,
    });
    await sendToIngress(ingressPort(s), { envelope: { from: 'forwarding-noreply@google.com', to: [forwarding] }, raw: confirmation });
    const shown = page.getByTestId('forwarding-confirmation');
    await shown.waitFor();
    assert.equal(await shown.getByLabel('Confirmation code').inputValue(), '482913377');
    assert.equal(
      await shown.getByRole('link', { name: 'Open the confirmation link' }).getAttribute('href'),
      'https://mail-settings.example.com/mail/vf-abc-confirm',
    );

    // The choice on the Switch step, by keyboard: off (saved at once), then on again.
    const keep = page.getByTestId('keep-reading').getByRole('checkbox', { name: keepLabel, exact: true });
    assert.equal(await keep.isChecked(), true);
    await keep.focus();
    await page.keyboard.press('Space');
    await page.getByText('The mailbox will not be read after the move.').waitFor();
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.keep_reading.on, false);
    await page.keyboard.press('Space');
    await page.getByText('Support mail will keep reading this mailbox after the move.').waitFor();
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.keep_reading.on, true);

    // Finish before a test message: only "without checking", with the spec's warning.
    await page.getByRole('button', { name: 'Finish', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('No test message has arrived by the new route yet.').waitFor();
    await dialog.getByText('mail that then still reaches only the old mailbox is not copied').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Finish now' }).count(), 0);
    await assertAccessible(page);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The test message: sent, then arriving by forwarding (live), and the quiet-period countdown.
    const sent = sink.messages.length;
    await page.getByRole('button', { name: 'Send test message' }).click();
    const [probe] = (await sink.waitFor(sent + 1)).slice(sent);
    assert.deepEqual(probe.to, [SUPPORT]);
    await page.getByTestId('test-message').getByText('waiting for it to arrive').waitFor();
    await sendToIngress(ingressPort(s), { envelope: { from: 'svc@svc.test', to: [forwarding] }, raw: probe.raw });
    await page.getByTestId('test-message').getByText('by forwarding').waitFor();
    const countdown = await page.getByTestId('countdown').innerText();
    assert.match(countdown, /Finishes by itself in 0:5\d:\d\d/);
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-7-switch');

    // 8. Done: finish now; the password is gone and the page says where to remove the app password.
    await page.getByRole('button', { name: 'Finish', exact: true }).click();
    const finishing = page.getByRole('dialog');
    assert.equal(await finishing.getByRole('checkbox', { name: keepLabel, exact: true }).isChecked(), true);
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-8-finish-confirm');
    await finishing.getByRole('button', { name: 'Finish now' }).click();
    const completed = await expectScreen(page, id, 'completed');
    assert.equal(completed.credentials.set, false);
    // The channel now reads the mailbox live with the move's password: said, with a link to its card.
    assert.equal(completed.keep_reading.result, 'handed_over');
    const handover = page.getByTestId('reading-handover');
    await handover.getByText('Support mail now reads this mailbox live').waitFor();
    // The password is the channel's now: the page says to keep it at the provider, not to remove it.
    await handover.getByText('Keep the app password or the app permission at the provider').waitFor();
    assert.equal(await page.getByText('cannot revoke an app password at the provider').count(), 0);
    await page.getByText('Finished after the test message arrived.').waitFor();
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-8-done');
    await handover.getByRole('link', { name: 'Open the channel’s mailbox reading' }).click();
    const card = page.locator(`#reading-${completed.channel_id}`);
    await card.waitFor();
    assert.equal(await card.evaluate((el) => el === document.activeElement), true, 'the reading card has the focus');
    assert.equal(await page.locator(`#ruser-${completed.channel_id}`).inputValue(), SUPPORT, 'the card shows the mailbox it reads');
    await page.goto(`${s.url}/settings/migrations/${id}`);
    await expectScreen(page, id, 'completed');

    // Remove imported history: the number shown must be typed; a wrong one removes nothing.
    const count = completed.remove_history.confirm_count as number;
    assert.ok(count > 0);
    await page.getByRole('button', { name: 'Remove imported history' }).click();
    const remove = page.getByRole('dialog');
    await remove.getByText(`Imported conversations nobody wrote in since: ${count}. This deletes them`).waitFor();
    await remove.getByLabel(`Type ${count} to confirm`).fill(String(count + 1));
    await remove.getByRole('button', { name: 'Remove imported history' }).click();
    await remove.getByText('That is not the number shown. Nothing was removed.').waitFor();
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.state, 'completed');
    await assertAccessible(page);
    await remove.getByLabel(`Type ${count} to confirm`).fill(String(count));
    await remove.getByRole('button', { name: 'Remove imported history' }).click();
    await expectScreen(page, id, 'removing');
    await drain();
    await expectScreen(page, id, 'removed');
    await page.getByTestId('removed').getByText(`Deleted: conversations ${count}`).waitFor();
    await assertAccessible(page);

    // The list shows it with its state; the activity log is readable.
    await page.getByRole('link', { name: '← Move to the service' }).click();
    await page
      .getByRole('row', { name: new RegExp(SUPPORT) })
      .getByText('History removed')
      .waitFor();
    await page.goto(`${s.url}/settings/migrations/${id}`);
    await page.getByText('Activity log').click();
    await page.locator('.mig-log').getByText('Password entered').first().waitFor();
    await page.locator('.mig-log').getByText('Test message arrived').waitFor();

    assert.deepEqual(d.snapshot(SUPPORT), untouched, 'the old mailbox was not changed');
    assert.deepEqual(errors, []);
  });
});
