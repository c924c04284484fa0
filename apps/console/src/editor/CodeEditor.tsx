import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { javascriptLanguage } from '@codemirror/lang-javascript';
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { Diagnostic, lintGutter, lintKeymap, setDiagnostics } from '@codemirror/lint';
import { EditorState, Text } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view';
import { useEffect, useRef } from 'react';
import { styleNonce } from './nonce';

/** A problem at a 1-based line and column (the API's compile errors count that way). */
export interface CodeProblem {
  line: number;
  column: number;
  message: string;
}

export interface CodeEditorProps {
  /** The code: read when the editor is made and whenever it differs from what the editor holds. */
  value: string;
  onChange: (value: string) => void;
  /** Ids of the element that names the editor and of the elements that describe it (the compile error). */
  labelledBy: string;
  describedBy?: string;
  problems: readonly CodeProblem[];
}

/** The range a 1-based line and column names in `doc`, clamped into it: one character, or none at a line's end. */
export function problemRange(doc: Text, problem: CodeProblem): { from: number; to: number } {
  const line = doc.line(Math.min(Math.max(1, problem.line), doc.lines));
  const from = Math.min(line.from + Math.max(0, problem.column - 1), line.to);
  return { from, to: Math.min(from + 1, line.to) };
}

// Colours as the console's (contrast of 4.5:1 at least, which axe checks); the rest is CodeMirror's base theme.
const theme = EditorView.theme({
  '&': { backgroundColor: '#fff', border: '1px solid #7a828e', borderRadius: '4px', fontSize: '0.9rem' },
  '&.cm-focused': { outline: '3px solid #e8a400', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace", minHeight: '8rem', maxHeight: '24rem' },
  '.cm-gutters': { backgroundColor: '#eef1f5', color: '#4a525e', borderRight: '1px solid #c9ced6' },
  '.cm-activeLineGutter': { backgroundColor: '#dde3ea' },
  '.cm-activeLine': { backgroundColor: '#f1f6fc' },
});

/**
 * CodeMirror 6 for JavaScript, with the small set of extensions a transform needs (line numbers, history, brackets,
 * highlighting) and the API's compile errors as lint diagnostics. Tab is left to move focus (no indentWithTab), so
 * the editor never traps the keyboard; Enter keeps the indentation.
 */
export function CodeEditor({ value, onChange, labelledBy, describedBy, problems }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const change = useRef(onChange);
  change.current = onChange;

  useEffect(() => {
    const attributes: Record<string, string> = { 'aria-labelledby': labelledBy };
    if (describedBy) attributes['aria-describedby'] = describedBy;
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          EditorView.cspNonce.of(styleNonce()),
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightActiveLine(),
          drawSelection(),
          history(),
          indentOnInput(),
          bracketMatching(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          // The language alone (javascript() would add completion sources this editor does not offer).
          javascriptLanguage,
          lintGutter(),
          keymap.of([...defaultKeymap, ...historyKeymap, ...lintKeymap]),
          EditorView.contentAttributes.of(attributes),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) change.current(update.state.doc.toString());
          }),
          theme,
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // Made once per mount (value and problems reach it through the effects below).
  }, [labelledBy, describedBy]);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const diagnostics: Diagnostic[] = problems.map((p) => ({ ...problemRange(editor.state.doc, p), severity: 'error', message: p.message }));
    editor.dispatch(setDiagnostics(editor.state, diagnostics));
  }, [problems]);

  return <div ref={host} className="code-editor" />;
}

export default CodeEditor;
