// Strings first: every area's catalogue is in place before any module renders.
import './strings';
import { render } from 'preact';
import { App } from './app';
import { watchInstallability } from './conversations';
import './styles/tokens.css';
import './styles/app.css';
import './styles/workspace.css';
import './styles/composer.css';
import './styles/overlays.css';
import './styles/settings.css';
import './styles/picker-bell-reports.css';
import './styles/recipients.css';
import './styles/editor.css';
import './styles/messages.css';
import './styles/views.css';

watchInstallability();
render(<App />, document.getElementById('app')!);
