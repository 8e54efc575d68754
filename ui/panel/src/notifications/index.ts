// Notifications: the listener that shows them, the bell, and the person's settings for them.
export { NotificationBell, NotificationListener, NotificationSettings } from './Notifications';
