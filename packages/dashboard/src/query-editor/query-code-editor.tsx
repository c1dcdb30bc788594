import { autocompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching } from '@codemirror/language';
import { lintKeymap } from '@codemirror/lint';
import { Compartment, EditorState, type Extension, Prec } from '@codemirror/state';
import { EditorView, keymap, placeholder } from '@codemirror/view';
import { type Ref, useEffect, useImperativeHandle, useRef } from 'react';
import type { InstanceSchema } from '../components/instance-schema.ts';
import { pageNonce } from '../page-nonce.ts';
import { queryCompletion } from './query-completion.ts';
import { queryLinter } from './query-diagnostics.ts';
import { queryHighlight } from './query-highlight.ts';
import './query-editor.css';

export interface QueryCodeEditorHandle {
  focus(): void;
  /** Selects `from`..`to` (UTF-16 offsets), scrolled into view, and focuses the editor. */
  select(from: number, to: number): void;
}

export interface QueryCodeEditorProps {
  value: string;
  onChange: (text: string) => void;
  /** Ctrl/⌘+Enter. */
  onRun: () => void;
  /** Tables, fields and relations to complete; none until the instance's schema is read. */
  schema: InstanceSchema | undefined;
  /** The visible label's id, and the hint's: the editor is no form control a label can name. */
  labelId: string;
  hintId: string;
  placeholder: string;
  ref?: Ref<QueryCodeEditorHandle>;
}

/** Without icons: each option's detail already says table, column type or relation. */
function completionFor(schema: InstanceSchema | undefined): Extension {
  return autocompletion({ override: schema ? [queryCompletion(schema)] : [], icons: false });
}

/**
 * The playground's CodeMirror editor: our lexer's colours, the schema's names, the parser's
 * errors. Loaded with the playground only (a lazy chunk), so other pages do not carry it.
 */
export default function QueryCodeEditor(props: QueryCodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const completion = useRef(new Compartment());
  // The editor lives across renders; its handlers read the latest props through this.
  const latest = useRef(props);
  latest.current = props;

  // biome-ignore lint/correctness/useExhaustiveDependencies: one editor per mount; later values arrive through the effects below.
  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          // The style elements CodeMirror injects carry the page's nonce, as its CSP requires.
          EditorView.cspNonce.of(pageNonce()),
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: () => {
                  latest.current.onRun();
                  return true;
                },
              },
            ]),
          ),
          history(),
          bracketMatching(),
          queryHighlight,
          queryLinter,
          completion.current.of(completionFor(props.schema)),
          keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, ...lintKeymap]),
          placeholder(props.placeholder),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({
            'aria-labelledby': props.labelId,
            'aria-describedby': props.hintId,
            'aria-multiline': 'true',
            spellcheck: 'false',
          }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
  }, []);

  // Text set from outside (an example picked, the next page's cursor) replaces the editor's.
  useEffect(() => {
    const editor = view.current;
    const current = editor?.state.doc.toString();
    if (!editor || current === props.value) return;
    editor.dispatch({
      changes: { from: 0, to: current?.length ?? 0, insert: props.value },
      selection: { anchor: props.value.length },
    });
  }, [props.value]);

  useEffect(() => {
    view.current?.dispatch({
      effects: completion.current.reconfigure(completionFor(props.schema)),
    });
  }, [props.schema]);

  useImperativeHandle(
    props.ref,
    () => ({
      focus: () => view.current?.focus(),
      select: (from, to) => {
        const editor = view.current;
        if (!editor) return;
        const length = editor.state.doc.length;
        editor.dispatch({
          selection: { anchor: Math.min(from, length), head: Math.min(to, length) },
          scrollIntoView: true,
        });
        editor.focus();
      },
    }),
    [],
  );

  return <div ref={host} className="query-code-editor" />;
}
