import { CodeEditor, CodeProblem } from '../../../editor/CodeEditor';
import { compileProblem, TRANSFORM_TEMPLATES, TransformField } from '../api/proxy-form';

const TRANSFORM_LABELS: Record<TransformField, string> = { request_transform: 'Request transform', response_transform: 'Response transform' };
const TRANSFORM_HINTS: Record<TransformField, string> = {
  request_transform: 'Runs before the request is sent on: req.args has body, headers, method, path and query; return { body, headers }.',
  response_transform: 'Runs on every destination response: req.args has body, headers and status; return { body, headers } (and status).',
};

/** One transform: CodeMirror, with the API's compile error at its line and column and, under it, in words. */
export function TransformEditor({
  field,
  value,
  onChange,
  messages,
}: {
  field: TransformField;
  value: string;
  onChange: (v: string) => void;
  messages: string[];
}) {
  const label = `${field}-label`;
  const errorId = `${field}-error`;
  const hintId = `${field}-hint`;
  const positioned = messages.map((m) => ({ text: m, at: compileProblem(m) }));
  const problems: CodeProblem[] = positioned.flatMap((p) => (p.at ? [p.at] : []));
  return (
    <section className="transform" aria-labelledby={label}>
      <div className="transform-heading">
        <h2 id={label}>{TRANSFORM_LABELS[field]}</h2>
        {value === '' && (
          <button type="button" className="secondary" onClick={() => onChange(TRANSFORM_TEMPLATES[field])}>
            Start from a template
          </button>
        )}
      </div>
      <p id={hintId} className="hint">
        {TRANSFORM_HINTS[field]} Empty: no transform. Tab leaves the editor.
      </p>
      <CodeEditor value={value} onChange={onChange} labelledBy={label} describedBy={`${hintId} ${errorId}`} problems={problems} />
      <div id={errorId} className="field-error" data-testid={`${field}-error`}>
        {positioned.map((p, i) => (
          <p key={i}>{p.at ? `Line ${p.at.line}, column ${p.at.column}: ${p.at.message}` : p.text}</p>
        ))}
      </div>
    </section>
  );
}
