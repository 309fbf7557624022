import { OPTIONS, OUTPUT_FORMATS, SHELLS, VERBS, type Shell } from './args.js';
import type { ConnectionFlags } from './kubeconfig.js';

/**
 * Shell completion in Cobra's protocol, the one kubectl speaks with a plugin's completion helper
 * (kubectl_complete-<plugin>, kubectl pkg/cmd/plugin/plugin_completion.go): the helper gets the words
 * after `kubectl kq`, the last being the one to complete ('' for a new word), and prints one
 * candidate a line, then `:<directive>`.
 */

/** Cobra's ShellCompDirective values used here. */
export const Directive = {
  /** Let the shell complete file names when there is no candidate. */
  Default: 0,
  NoFileComp: 4,
} as const;

export interface Completion {
  candidates: string[];
  directive: number;
}

/** What completion may look up on the cluster; any failure is no candidates. */
export interface CompletionSources {
  namespaces(flags: ConnectionFlags): Promise<string[]>;
  quotas(flags: ConnectionFlags): Promise<string[]>;
  contexts(flags: ConnectionFlags): string[];
}

type Option = keyof typeof OPTIONS;

const flagOf = (word: string): Option | undefined => {
  if (word.startsWith('--')) {
    const name = word.slice(2).split('=')[0]!;
    return name in OPTIONS ? (name as Option) : undefined;
  }
  if (word.startsWith('-') && word.length >= 2) {
    const short = word[1];
    return (Object.keys(OPTIONS) as Option[]).find(
      (name) => (OPTIONS[name] as { short?: string }).short === short,
    );
  }
  return undefined;
};

const takesValue = (option: Option | undefined): boolean => !!option && OPTIONS[option].type === 'string';

/** The flag whose value the next word is (`-n`, `--namespace`); not `-nx` or `--namespace=x`. */
function awaitingValue(word: string | undefined): Option | undefined {
  if (word === undefined || word.includes('=')) return undefined;
  if (!word.startsWith('--') && word.length !== 2) return undefined;
  const option = flagOf(word);
  return takesValue(option) ? option : undefined;
}

/** The positionals and connection flags of complete words (`-n x`, `--namespace=x`, `-nx` forms). */
function readWords(words: string[]): {
  positionals: string[];
  flags: ConnectionFlags;
  allNamespaces: boolean;
} {
  const positionals: string[] = [];
  const flags: ConnectionFlags = {};
  let allNamespaces = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const option = flagOf(word);
    if (!word.startsWith('-') || word === '-') {
      positionals.push(word);
      continue;
    }
    if (option === 'all-namespaces') allNamespaces = true;
    if (!takesValue(option)) continue;
    const inline = word.startsWith('--') ? word.split('=').slice(1).join('=') : word.slice(2);
    const hasInline = word.startsWith('--') ? word.includes('=') : word.length > 2;
    const value = hasInline ? inline : words[++i];
    if (value === undefined) continue;
    if (option === 'namespace' || option === 'context' || option === 'kubeconfig') flags[option] = value;
  }
  return { positionals, flags, allNamespaces };
}

const matching = (candidates: readonly string[], prefix: string): string[] =>
  candidates.filter((c) => c.startsWith(prefix));

const noFiles = (candidates: string[]): Completion => ({ candidates, directive: Directive.NoFileComp });

/** The candidates for the last of `words`, the words after `kubectl kq`. */
export async function complete(words: string[], sources: CompletionSources): Promise<Completion> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const { positionals, flags, allNamespaces } = readWords(before);
  const pending = awaitingValue(before.at(-1));
  // The value of a flag: `-n <TAB>`, or `--namespace=<TAB>` in the word itself.
  const valueOf = async (option: Option, prefix: string, typed: string): Promise<Completion> => {
    const values = await flagValues(option, flags, sources);
    if (values === undefined) return { candidates: [], directive: Directive.Default };
    return noFiles(matching(values, typed).map((value) => prefix + value));
  };
  if (current.startsWith('--') && current.includes('=')) {
    const option = flagOf(current);
    const prefix = current.slice(0, current.indexOf('=') + 1);
    if (takesValue(option)) return valueOf(option!, prefix, current.slice(prefix.length));
    return noFiles([]);
  }
  if (pending) return valueOf(pending, '', current);
  if (current.startsWith('-')) {
    return noFiles(
      matching(
        Object.keys(OPTIONS).map((name) => `--${name}`),
        current,
      ),
    );
  }
  const [verb, ...names] = positionals;
  if (verb === undefined) return noFiles(matching(VERBS, current));
  if (verb === 'completion') return noFiles(names.length === 0 ? matching(SHELLS, current) : []);
  if ((verb === 'get' || verb === 'describe') && !allNamespaces) {
    const quotas = await sources.quotas(flags).catch(() => []);
    return noFiles(matching(quotas, current).filter((name) => !names.includes(name)));
  }
  return noFiles([]);
}

async function flagValues(
  option: Option,
  flags: ConnectionFlags,
  sources: CompletionSources,
): Promise<string[] | undefined> {
  switch (option) {
    case 'namespace':
      return sources.namespaces(flags).catch(() => []);
    case 'context':
      try {
        return sources.contexts(flags);
      } catch {
        return [];
      }
    case 'output':
      return [...OUTPUT_FORMATS];
    default:
      return undefined; // --kubeconfig: a file name, which the shell completes
  }
}

/** What the completion helper prints: a candidate a line, then the directive. */
export const cobraOutput = ({ candidates, directive }: Completion): string =>
  [...candidates, `:${directive}`].join('\n') + '\n';

/**
 * `kubectl kq completion SHELL`: completes the `kubectl-kq` command itself by asking it
 * (`kubectl-kq __complete ...`), as kubectl asks kubectl_complete-kq for `kubectl kq <TAB>`.
 */
export function completionScript(shell: Shell): string {
  return shell === 'bash' ? BASH : ZSH;
}

const BASH = `# bash completion for kubectl-kq: source <(kubectl kq completion bash)
# (kubectl kq <TAB> is completed by kubectl's own completion through kubectl_complete-kq on PATH)
_kubectl_kq() {
  local cur=\${COMP_WORDS[COMP_CWORD]} out directive
  out=$(kubectl-kq __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return
  directive=\${out##*:}
  out=\${out%:*}
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$out" -- "$cur"))
  if [ \${#COMPREPLY[@]} -eq 0 ] && [ $((directive & 4)) -eq 0 ]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _kubectl_kq kubectl-kq
`;

const ZSH = `#compdef kubectl-kq
# zsh completion for kubectl-kq: source <(kubectl kq completion zsh), after compinit
# (kubectl kq <TAB> is completed by kubectl's own completion through kubectl_complete-kq on PATH)
_kubectl_kq() {
  local -a lines candidates
  local directive
  lines=("\${(@f)$(kubectl-kq __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null)}")
  directive=\${lines[-1]#:}
  candidates=("\${(@)lines[1,-2]}")
  if (( \${#candidates} )); then
    compadd -- "\${candidates[@]}"
  elif (( (directive & 4) == 0 )); then
    _files
  fi
}
compdef _kubectl_kq kubectl-kq
`;
