import Foundation
import SanadChat
import SanadCore

// A chat in a terminal: the transcript printer and the tools switch, for `sanad chat` and any other terminal front
// end of a ChatSession.

/// `/tools on|off`: whether typed text goes to the model with the plugins' tools offered.
public final class ToolsMode: @unchecked Sendable {  // @unchecked: `on` behind `lock`
    private let lock = NSLock()
    private var enabled = false
    public let offered: [any Tool]

    public init(offered: [any Tool]) { self.offered = offered }

    public var on: Bool {
        get { lock.withLock { enabled } }
        set { lock.withLock { enabled = newValue } }
    }
}

/// Prints chat events as a transcript and numbers the links it shows.
public final class ChatPrinter: @unchecked Sendable {  // @unchecked: mutable state behind `lock`
    private let lock = NSLock()
    public let linkFormat: DeepLinkFormat
    /// The product's labels.
    public let words: TerminalWording
    private var shownLinks: [DeepLink] = []

    public init(linkFormat: DeepLinkFormat, words: TerminalWording) {
        self.linkFormat = linkFormat
        self.words = words
    }

    /// Who wrote `m`, as the product labels it.
    public func speaker(_ m: ChatEntry) -> String { m.isUser ? words.user : words.assistant }
    /// A reply is being streamed (its line is open).
    private var streaming = false

    public var links: [DeepLink] { lock.withLock { shownLinks } }

    public func reset(links: [DeepLink]) {
        lock.withLock { shownLinks = links }
    }

    public func printSuggestions(_ suggestions: [ChatSuggestion]) {
        guard !suggestions.isEmpty else { return }
        print(words.suggestions)
        for (i, s) in suggestions.enumerated() { print("  \(i + 1)) \(s.text)") }
    }

    private func printLink(_ link: DeepLink?) {
        guard let link else { return }
        let n = lock.withLock {
            shownLinks.append(link)
            return shownLinks.count
        }
        print("    [\(words.link(n))] \(link.url(linkFormat))")
    }

    public func handle(_ event: ChatEvent) {
        switch event {
        case .messageAdded(let m):
            if lock.withLock({ () -> Bool in
                defer { streaming = false }
                return streaming
            }) {
                writeOut("\n")
            }
            print("\(speaker(m)): \(m.content)")
            printLink(m.deepLink)
        case .suggestionsChanged(let s):
            printSuggestions(s)
        case .engineStateChanged(let state):
            switch state {
            case .failed: printError("[engine failed to load; /retry tries again]")
            case .loading: print(words.loading)
            case .ready: print(words.ready)
            case .unloaded, .notLoaded: break
            }
        case .processingChanged:
            break
        case .draftChecked(_, let draft, _):
            // Only with --show-drafts: the model's unchecked wording, before the verified reply.
            print("\(words.draft): \(draft)")
        case .replyStarted:
            lock.withLock { streaming = true }
            writeOut(words.writing + ": ")
        case .replyPiece(_, _, let text):
            writeOut(text)
        case .replyFinished(let m, _, let stats):
            lock.withLock { streaming = false }
            writeOut("\n")
            if let check = m.check { print("    " + check.note) }
            printLink(m.deepLink)
            if let stats {
                printError(
                    "[\(stats.promptTokens) prompt tokens in \(String(format: "%.2f", stats.promptSeconds)) s, "
                        + "\(stats.generatedTokens) tokens at \(String(format: "%.1f", stats.generationTokensPerSecond)) tokens/s]"
                )
            }
        case .navigated(let d):
            print(d.text(linkFormat))
            print(words.pageShown)
        }
    }
}
