// The import rules of src/ (issue 20) and ui/ (issue 41). docs/internals.md ("Layers") shows the same picture.
//
//   src/main.ts, src/cli.ts, src/server/          assembly: command, route, background and lifecycle tables
//        ↓
//   src/<feature>/                                 features (routes → service/format/store)
//        ↓
//   src/http/                                      HTTP plumbing (app, auth middleware, errors, openapi)
//        ↓
//   src/auth/                                      permission matrix, credentials, revocation signal
//        ↓
//   src/platform/  src/db/  src/config.ts  src/context.ts  src/version.ts  migrations/
//
// An arrow may go down (or stay inside a layer), never up.
const BELOW_FEATURES = '^(src/(http|auth|platform|db)/|src/(config|context|version)\\.ts$|migrations/)';

// The panel (ui/panel/src, issue 41) has the same shape: areas over shared pieces.
//
//   main.tsx, app.tsx, strings.ts, settings/*.tsx   assembly: routes, the settings page, the catalogues
//        ↓  (only through an area's index.ts, or its strings/)
//   <area>/, settings/<section>/                     areas: pages, components, state and strings
//        ↓  (another area only through its index.ts)
//   components/ i18n/ styles/ api.ts state.ts realtime.ts passkeys.ts     shared: import no area
const PANEL_SHARED = '^ui/panel/src/(components/|i18n/|styles/|(api|state|realtime|passkeys)\\.ts$)';
const PANEL_AREA = '^ui/panel/src/(settings/[^/]+|(?!settings/|components/|i18n/|styles/)[^/]+)/';
// An area's faces: index.ts, its strings, and pages.tsx where its pages load lazily apart from what index.ts gives.
const PANEL_AREA_FACE = '^ui/panel/src/(settings/[^/]+|[^/]+)/(index\\.tsx?|pages\\.tsx|strings/[^/]+\\.ts)$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only ones included: a cycle ties every file on it together.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'http-and-platform-import-no-feature',
      severity: 'error',
      comment:
        'src/http, src/auth, src/platform and src/db are the plumbing under the features: they import only each other, ' +
        'config.ts, context.ts, version.ts and migrations/. Tables of features are assembled in src/server.',
      from: { path: '^src/(http|auth|platform|db)/' },
      to: { pathNot: [BELOW_FEATURES, '^node_modules/'], dependencyTypesNot: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'lower-layers-stay-below-http',
      severity: 'error',
      comment: 'src/auth, src/platform and src/db never import src/http (HTTP is above them).',
      from: { path: '^src/(auth|platform|db)/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'platform-and-db-below-auth',
      severity: 'error',
      comment: 'src/platform and src/db never import src/auth.',
      from: { path: '^src/(platform|db)/' },
      to: { path: '^src/auth/' },
    },
    {
      name: 'no-routes-imports-across-features',
      severity: 'error',
      comment:
        "A feature imports another feature's service, format (response schemas) or store, never its routes: " +
        'routes are leaves that only the route table (src/server/routes.ts) imports.',
      from: { path: '^src/([^/]+)/', pathNot: '^src/server/' },
      to: {
        path: ['^src/[^/]+/routes[^/]*\\.ts$', '^src/[^/]+/[^/]*-routes\\.ts$', '^src/[^/]+/routes/', '^src/[^/]+/[^/]+/routes[^/]*\\.ts$'],
        pathNot: '^src/$1/',
      },
    },
    {
      name: 'services-import-no-http',
      severity: 'error',
      comment:
        'Services, stores, formatters and jobs take plain input and throw the typed errors of platform/errors.ts; ' +
        'only routes (and the server assembly) touch src/http.',
      from: {
        path: '^src/[^/]+/',
        pathNot: [
          '^src/(http|server)/',
          // routes files and route folders are the HTTP side of a feature
          '/routes[^/]*\\.ts$',
          '-routes\\.ts$',
          '/routes/',
        ],
      },
      to: { path: '^src/http/' },
    },
    {
      name: 'panel-shared-imports-no-area',
      severity: 'error',
      comment: "The panel's shared pieces (components/, i18n/, styles/, the API client, state, realtime) import no area and no assembly.",
      from: { path: PANEL_SHARED },
      to: { path: '^ui/panel/src/', pathNot: PANEL_SHARED },
    },
    {
      name: 'panel-areas-import-no-internals-of-others',
      severity: 'error',
      comment:
        "A panel area imports its own files and shared pieces; another area only through that area's index.ts; never the assembly " +
        '(app.tsx, strings.ts, settings/Settings.tsx).',
      from: { path: PANEL_AREA },
      to: { path: '^ui/panel/src/', pathNot: ['^ui/panel/src/$1/', PANEL_SHARED, '^ui/panel/src/(settings/[^/]+|[^/]+)/index\\.tsx?$'] },
    },
    {
      name: 'panel-assembly-imports-area-faces',
      severity: 'error',
      comment: "The panel's assembly (main.tsx, app.tsx, strings.ts, the settings page) reaches an area through its index.ts, pages.tsx or strings/.",
      from: { path: '^ui/panel/src/(settings/)?[^/]+\\.tsx?$' },
      to: { path: PANEL_AREA, pathNot: PANEL_AREA_FACE },
    },
    {
      name: 'panel-and-widget-apart',
      severity: 'error',
      comment: 'The panel and the widget are separate bundles: neither imports the other.',
      from: { path: '^ui/(panel|widget)/' },
      to: { path: '^ui/(panel|widget)/', pathNot: '^ui/$1/' },
    },
    {
      name: 'ui-imports-no-server',
      severity: 'error',
      comment: 'ui/ talks to the server only over /v1, typed from its OpenAPI document (ui/generated), never by importing src/.',
      from: { path: '^ui/' },
      to: { path: '^(src|migrations)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|test|bench)/|^ui/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
