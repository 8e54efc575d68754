// An in-process signal (on ctx.hub) that credentials stopped working: a workspace was deleted or an
// account was. Live connections (realtime sockets) of that workspace or person close when they hear it.
export const ACCESS_REVOKED = 'access-revoked';
export type AccessRevoked = { workspaceId: string; personId?: undefined } | { personId: string; workspaceId?: undefined };
