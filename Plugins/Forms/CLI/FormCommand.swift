import FormsPlugin
import Foundation
import OCRIngestPlugin
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad form`: template-driven forms (DMV licence renewal, DS-160) one question at a time, every answer saved
/// before it is acknowledged.
public enum FormCommand: VerbCommand {
    public static let name = "form"
    public static let aliases = ["forms"]
    public static let summary = "Fill a form (DMV renewal, DS-160) question by question; review, export, backup"
    public static let help = """
        Usage: sanad form list | sessions [--json]
               sanad form start TEMPLATE [--lang en|ar|es] [--id ID] [--json]
               sanad form resume SESSION [--json]
               sanad form answer SESSION [--field FIELD] TEXT [--json]
               sanad form answer SESSION TEXT --provider model|rules-then-model [-m MODEL] [--backend ID]
                                 [--chat-template NAME|FILE] [--max-tokens N] [--index FILE [--context K]] [--yes]
               sanad form eval FILE [--provider model|rules-then-model -m MODEL …] [--verbose]
               sanad form back SESSION
               sanad form review SESSION [--json]
               sanad form fill SESSION FILE|- [--kind auto|mrz|aamva] [--ocr-lang LANGS] [--yes]
               sanad form export SESSION --out DIR
               sanad form backup SESSION|--all FILE
               sanad form restore FILE [--dry-run] [--replace] [--key FILE] [--allow-unkeyed]
               sanad form backups [--json]
               sanad form privacy [--export FILE] [--wipe [--yes]] [--json]

        'start' and 'resume' ask the questions one at a time and read the answers from standard input (a terminal
        or a pipe). A line is the answer to the question shown; '✓ saved FIELD = VALUE' is printed only after the
        answer is on disk. Commands: /back (reopen the last answer), /change FIELD, /skip (optional fields),
        /review, /progress, /quit. End of input leaves the session saved for 'resume'. ('sanad forms' is the
        same command.)

        'answer' gives one answer (to the current question, or to --field) and prints the next question.
        With --provider model the text is free text ("I'm Sara Al-Harbi, born 3 March 1991"): a model reads it
        into the step's pending fields through structured output (only pending fields can be named); each valid
        value is shown with the model as its evidence and saved, as model-confirmed, when you accept it (a line
        yes, no, all or quit; --yes accepts all). When no engine can run the model, or none of its values passes
        the field checks, the rules provider answers the current question and a note says so. With --provider
        rules-then-model the model reads the text only when it does not fit the current question. The default
        provider is rules: on the evaluation set the small models beat it only on text that carries several
        fields, and with low precision (Plugins/Forms/README.md).
        'eval' scores field-level precision, recall and F1 on an evaluation set (Tests/Fixtures/forms-eval/
        utterances.json) for the rules provider and, with --provider model, for the model; a Markdown table.
        'fill' reads a document (a passport's machine-readable zone for the DS-160, a driver licence's barcode
        text for the DMV renewal; text, or an image through Tesseract as 'sanad ingest' reads it) and shows each
        field it proposes with its evidence (zone field or barcode element, OCR repairs); a line 'yes', 'no', 'all'
        or 'quit' decides each one (--yes accepts all). Accepted values are checked like typed answers and saved
        with the document as their evidence.

        'export' writes answers.json (answers with their evidence, fees, checklist), form.txt (the form pre-filled)
        and checklist.txt into DIR, form.pdf and checklist.pdf (any script: Arabic shaped and right to left, in an
        embedded DejaVu Sans subset), all in the session's language; form-en.pdf, the official form's language,
        when the session is in another; and reminder-FIELD.ics for an answered appointment or travel date.

        'backup' writes a ZIP archive (any unzip opens it): one session or all of them (each with its template id
        and version and a SHA-256), their exported documents, the templates, manifest.json with the SHA-256 of
        every file and the store's schema version, and manifest.hmac, the manifest's keyed digest (HMAC-SHA256
        with backup.key, a random key made in the store folder, mode 0600). 'restore' checks the archive, the
        keyed digest, the manifest, every digest and every answer before it writes anything, then merges per
        session: a session the store lacks is added, and of two versions the one with the later last answer
        wins (the store's on a tie) unless --replace. Before it writes, the store is copied aside into the
        backups folder (listed by 'backups', restorable like any backup). A backup from another store needs
        that store's key (--key FILE, its backup.key); an archive without a keyed digest, or a single-session
        JSON backup of earlier versions, only --allow-unkeyed. --dry-run says what it would do.

        Automatic backups: after an answer that completes a form, and after the first answer of a day (when the
        newest automatic backup is over a day old), every session is backed up into STORE/backups/ (written
        atomically; the newest 7 kept, --keep-backups N); --no-auto-backup turns them off. 'backups' lists them
        and the copies made before restores.

        'privacy' shows what the forms plugin keeps on this device (sessions, answers by source, files and sizes,
        where) and that nothing is sent anywhere; --export FILE writes everything as a backup archive; --wipe
        deletes every session, the store files and the backups folder after you type WIPE (or with --yes); the
        backup key stays, so archives you exported can still be restored.

        Sessions are stored in an SQLite database (the system libsqlite3, loaded at run time; WAL journal, one
        transaction per answer) in the store folder; without SQLite, in a JSON file replaced atomically.

        Options:
          --store DIR       the store folder (default: SANAD_DATA/forms, else ~/.local/share/sanad/plugins/forms)
          --lang LANG       the language of questions and labels (start; default en)
          --id ID           the new session's id (start; default TEMPLATE-<random>)
          --field FIELD     the field to answer (answer; default: the current question)
          --provider P      answer, eval, start, resume: rules (default: the text answers the current question), model, or
                            rules-then-model (the model reads the text only when the rules answer is refused)
          -m, --model M     --provider model: a .gguf path or a name in the models folder (default: the tier's)
          --backend ID      --provider model: the engine (default: the first available of the tier's list)
          --chat-template NAME|FILE
                            --provider model: a built-in family (chatml, gemma, llama3) or a Jinja file instead
                            of the model's own template (--template is an alias)
          --max-tokens N    --provider model: the reply's token limit (default 160)
          --index FILE      --provider model: a vector index of the person's documents ('sanad ingest --index');
                            the passages closest to the text go into the prompt, and a proposal's evidence cites
                            those that state its value (bill.txt#2 bytes 120-388)
          --context K       --provider model with --index: passages per turn (default 3)
          --verbose         eval: each utterance's saved and expected values on standard error
          --json            machine-readable output
          --dry-run         restore: check and describe, write nothing
          --replace         restore: the backup's version of each session wins, even when the store's is newer
          --key FILE        restore: also accept archives keyed with FILE (another store's backup.key; repeatable)
          --allow-unkeyed   restore: accept an archive or session file without a keyed digest (one you made)
          --keep-backups N  how many automatic backups to keep (default 7)
          --no-auto-backup  make no automatic backup
          --all             backup: every session in the store
          --export FILE     privacy: write everything to a backup archive
          --wipe            privacy: delete every session and the store files (asks for WIPE unless --yes)
          --yes             privacy --wipe: do not ask; fill, answer --provider model: accept every proposed field
          --kind KIND       fill: read the document as auto (default), mrz or aamva
          --ocr-lang LANGS  fill: Tesseract languages for an image (default eng)
        \(PluginHost.clockHelp)
        \(HostContext.optionsHelp)
        Exit status: 0 success, 1 failure (unknown session, store error, refused backup, an answer refused by
        'answer'), 64 usage.

        Examples:
          sanad form list
          printf 'yes\\nCA\\nMaria Lopez\\n' | sanad form start dmv-renewal --id demo
          sanad form review demo
          sanad form answer demo "I live at 12 Elm St, Fresno 93721" --provider model -m SmolLM2-135M-Instruct.Q4_1.gguf
          sanad form eval Tests/Fixtures/forms-eval/utterances.json --provider model --backend llama \\
            -m gemma-3-270m-q4_k_m.gguf --template gemma
          sanad form export demo --out /tmp/demo
        """

    public static var verbs: [any CommandVerb.Type] {
        [
            List.self, Sessions.self, Start.self, Resume.self, Answer.self, Eval.self, Back.self, Review.self,
            Fill.self,
            Export.self, Backup.self, Restore.self, Backups.self, Privacy.self,
        ]
    }

    /// Writes an output file durably (a temporary file renamed over it).
    static func writeExport(_ data: Data, to url: URL) throws {
        do { try data.write(to: url, options: .atomic) } catch {
            throw SanadError.engine("\(url.path): cannot be written (\(error.localizedDescription))")
        }
    }

    /// `[3/19 15%] Identity — What is your full name…` (the prompt lists the choices).
    static func ask(_ q: FormQuestion, _ s: FormSession) -> String {
        let p = s.progress
        return "[\(p.answered)/\(p.total) \(p.percent)%] \(q.stepTitle) — \(q.prompt)"
    }

    static func describe(_ o: AnswerOutcome) -> String {
        switch o {
        case .saved(let field, let value, let reopened):
            var line = "✓ saved \(field) = \(value.isEmpty ? "(skipped)" : TerminalText.escaped(value))"
            for r in reopened { line += "\n✗ \(TerminalText.escaped(r.message)) (\(r.field) is asked again)" }
            return line
        case .refused(let p):
            return "✗ \(TerminalText.escaped(p.message))\n  \(TerminalText.escaped(p.suggestion))"
        }
    }

    /// The question-and-answer loop over standard input; with `model` (`--provider model`), each answer is read by
    /// the model provider as in `sanad form answer`.
    static func converse(
        _ s: inout FormSession, json: Bool, model: (any FormAnswerProvider, ModelOptions)? = nil,
        acceptAll: Bool = false
    ) async throws -> Int32 {
        func show(_ value: JSONValue) { print(value.jsonString) }
        while true {
            guard let q = s.nextQuestion else {
                if json {
                    show(s.stateJSON)
                } else {
                    print("Form complete. 'sanad form export \(s.id) --out DIR' writes the results.")
                }
                return ExitCode.success
            }
            if json { show(s.stateJSON) } else { print(ask(q, s)) }
            guard let line = readLine() else {
                print("(input ended; session \(s.id) is saved: 'sanad form resume \(s.id)' continues)")
                return ExitCode.success
            }
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if !json && !isatty(0).boolValue { print("> \(TerminalText.escaped(String(text.prefix(200))))") }
            let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
            do {
                switch parts.first ?? "" {
                case "/quit":
                    print("(session \(s.id) is saved: 'sanad form resume \(s.id)' continues)")
                    return ExitCode.success
                case "/back": print("reopened \(try s.back())")
                case "/change":
                    guard parts.count == 2 else { throw FormError.invalidRequest("/change needs a field id") }
                    try s.reopen(parts[1])
                    print("reopened \(parts[1])")
                case "/skip":
                    let o = try s.skip()
                    if json { show(o.json) } else { print(describe(o)) }
                case "/review": print(FormReview(s).documentText, terminator: "")
                case "/progress":
                    let p = s.progress
                    print("\(p.percent)% (\(p.answered)/\(p.total))")
                    for step in p.steps {
                        print(
                            "  \(step.state.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \(step.title)")
                    }
                default:
                    let outcomes: [AnswerOutcome]
                    if let (provider, options) = model {
                        outcomes = try await answerWithModel(
                            &s, text: text, provider: provider, options: options, acceptAll: acceptAll)
                    } else {
                        outcomes = try await s.respond(text)
                    }
                    for o in outcomes {
                        if json { show(o.json) } else { print(describe(o)) }
                    }
                }
            } catch let error as FormError {
                print("✗ \(TerminalText.escaped("\(error)"))")
            }
        }
    }
}

extension Int32 {
    fileprivate var boolValue: Bool { self != 0 }
}
