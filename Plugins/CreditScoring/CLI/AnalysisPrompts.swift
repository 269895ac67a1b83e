import CreditScoringPlugin
import Foundation
import SanadCommandLine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `analyze` asks a person at a terminal before it starts: consent before the first analysis, and for a large
/// input, all / loved ones only / background. Piped, nothing is asked: `--consent`, `--scope` and `--background`
/// decide.
enum AnalysisPrompts {
    /// Whether a person can answer: the input is a file (standard input is not the messages) and standard input
    /// and standard error are terminals.
    static func interactive(path: String) -> Bool {
        path != "-" && isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
    }

    /// The question on standard error, the answer from standard input (nil at its end).
    static func ask(_ question: String) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return readLine()
    }

    /// The consent kept in `store`; else `--consent` (kept, `flag`); else, on a terminal, the person's yes (kept,
    /// `terminal`). A no ends the command (exit 1); piped input without `--consent` is a usage error.
    static func consent(store: RecordStore, given: Bool, interactive: Bool, now: Date) throws -> Consent {
        if let kept = Consent.load(store) { return kept }
        let how: String
        if given {
            how = "flag"
        } else if interactive {
            guard Consent.isYes(ask(Consent.question)) else {
                throw CreditError.record("no consent, so no analysis: nothing was read or written")
            }
            how = "terminal"
        } else {
            throw UsageError(
                "the first analysis needs your consent: run it on a terminal to be asked, or pass --consent "
                    + "(the messages are read on this device only; no text is stored or sent)")
        }
        let consent = Consent(givenAt: now, how: how)
        try consent.save(in: store)
        return consent
    }

    /// For a large file on a terminal with neither `--scope` nor `--background`: the person's choice (asked until
    /// an answer names one; the end of input chooses all). Nil when nothing is asked.
    static func largeInput(path: String, interactive: Bool, scopeGiven: Bool, backgroundGiven: Bool, isJob: Bool)
        -> LargeInputChoice?
    {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let threshold =
            ProcessInfo.processInfo.environment["SANAD_CREDIT_LARGE_BYTES"].flatMap { Int($0) }
            ?? LargeInputOffer.defaultThresholdBytes
        guard
            LargeInputOffer.shouldOffer(
                path: path, sizeBytes: size, thresholdBytes: threshold, interactive: interactive,
                scopeGiven: scopeGiven, backgroundGiven: backgroundGiven, isJob: isJob)
        else { return nil }
        let question = LargeInputOffer.question(
            bytes: size, messages: CreditJobs.estimateMessages(URL(fileURLWithPath: path)))
        while let answer = ask(question) {
            if let choice = LargeInputOffer.choice(answer) { return choice }
        }
        return .all
    }
}
