// An in-process signal (on ctx.hub) that credentials stopped working: a workspace was deleted, an
// account was, a member was removed from a workspace or their role changed, or sessions ended.
// Live connections (realtime sockets) that the signal names close when they hear it.
export const ACCESS_REVOKED = 'access-revoked';
export type AccessRevoked =
  | { workspaceId: string; personId?: undefined; membership?: undefined; sessionIds?: undefined }
  | { personId: string; workspaceId?: undefined; membership?: undefined; sessionIds?: undefined }
  | { membership: { workspaceId: string; personId: string }; workspaceId?: undefined; personId?: undefined; sessionIds?: undefined }
  | { sessionIds: string[]; workspaceId?: undefined; personId?: undefined; membership?: undefined };
