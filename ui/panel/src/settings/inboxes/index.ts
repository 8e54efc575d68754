export { InboxDetail, InboxList } from './InboxSettings';
