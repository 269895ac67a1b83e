import Foundation

/// What a person may choose for a large input on a terminal (the specification's choices).
public enum LargeInputChoice: String, Sendable, CaseIterable {
    case all
    case lovedOnes = "loved-ones"
    case background
}

/// When `sanad credit analyze` offers the choices for a large input, and how an answer reads. Piped input (or an
/// input read from standard input) never asks: `--scope` and `--background` decide.
public enum LargeInputOffer {
    /// An input of this many bytes or more is large (16 MiB: about 250,000 messages of a chat export).
    public static let defaultThresholdBytes = 16 << 20

    /// Whether to ask: a file (not standard input) of at least `thresholdBytes`, with a terminal to answer on, and
    /// neither `--scope` nor `--background` given, and not already a background job.
    public static func shouldOffer(
        path: String, sizeBytes: Int, thresholdBytes: Int, interactive: Bool, scopeGiven: Bool,
        backgroundGiven: Bool, isJob: Bool
    ) -> Bool {
        path != "-" && interactive && !scopeGiven && !backgroundGiven && !isJob && sizeBytes >= thresholdBytes
    }

    /// The question, with the input's size and its estimated messages.
    public static func question(bytes: Int, messages: Int) -> String {
        let size = bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
        return "This input is large (\(size), about \(messages) messages). Analyse [a]ll of it, only your "
            + "[l]oved ones' conversations, or in the [b]ackground (a job of its own; 'sanad credit jobs' shows it)? "
            + "[A/l/b] "
    }

    /// The choice an answer names (`a`, `all`, an empty line → all; `l`, `loved`, `loved-ones`; `b`,
    /// `background`), or nil for anything else (asked again).
    public static func choice(_ answer: String) -> LargeInputChoice? {
        switch answer.trimmingCharacters(in: .whitespaces).lowercased() {
        case "", "a", "all": return .all
        case "l", "loved", "loved-ones", "loved ones": return .lovedOnes
        case "b", "background": return .background
        default: return nil
        }
    }
}
