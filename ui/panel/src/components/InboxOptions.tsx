// The workspace's inboxes as the options of an inbox picker (filters, signature, webhook, migration).
import { inboxes } from '../state';

export function InboxOptions() {
  return (
    <>
      {inboxes.value.map((i) => (
        <option key={i.id} value={i.id}>
          {i.name}
        </option>
      ))}
    </>
  );
}
