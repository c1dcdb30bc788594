import {
  type PostV1ConnectionsTestConnectionData,
  postV1ConnectionsTestConnection,
} from '@replix/client';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';
import { type ConnectionDraft, testBody } from './connection-draft.ts';

type TestInput = PostV1ConnectionsTestConnectionData['body'];

/**
 * POST /v1/connections/test-connection for a draft, remembering what was tested so a page can
 * say when the form has changed since.
 */
export function useConnectionTest() {
  const test = useMutation({
    mutationFn: (body: TestInput) => unwrap(postV1ConnectionsTestConnection({ client: api, body })),
  });
  const testedBody = test.variables;
  return {
    test,
    run: (draft: ConnectionDraft) => test.mutate(testBody(draft)),
    /** The last test was of exactly these settings. */
    isCurrent: (draft: ConnectionDraft) =>
      testedBody !== undefined && JSON.stringify(testedBody) === JSON.stringify(testBody(draft)),
  };
}
