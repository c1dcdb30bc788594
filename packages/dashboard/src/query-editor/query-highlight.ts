import type { Range } from '@codemirror/state';
import {
  Decoration,
  type DecorationSet,
  type EditorView,
  ViewPlugin,
  type ViewUpdate,
} from '@codemirror/view';
import { editorTokens, type TokenClass } from './query-tokens.ts';

const MARKS: Record<TokenClass, Decoration> = {
  keyword: Decoration.mark({ class: 'rx-keyword' }),
  name: Decoration.mark({ class: 'rx-name' }),
  string: Decoration.mark({ class: 'rx-string' }),
  number: Decoration.mark({ class: 'rx-number' }),
  operator: Decoration.mark({ class: 'rx-operator' }),
  punctuation: Decoration.mark({ class: 'rx-punctuation' }),
  comment: Decoration.mark({ class: 'rx-comment' }),
  invalid: Decoration.mark({ class: 'rx-invalid' }),
};

function decorate(view: EditorView): DecorationSet {
  const ranges: Range<Decoration>[] = [];
  for (const token of editorTokens(view.state.doc.toString())) {
    if (token.to > token.from) ranges.push(MARKS[token.kind].range(token.from, token.to));
  }
  // Comments are found after the token that follows them: sort, as a RangeSet needs.
  return Decoration.set(ranges, true);
}

/**
 * Colours the query from our own lexer's tokens (no second grammar to keep in step): a query
 * is a few lines, so the whole text is read again on each change.
 */
export const queryHighlight = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = decorate(view);
    }
    update(update: ViewUpdate) {
      if (update.docChanged) this.decorations = decorate(update.view);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);
