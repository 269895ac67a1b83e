import AbsherData
import DependentsPlugin
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

/// The chat host's state machine, with a scripted engine (what a real model writes is shown with `sanad chat`).
/// The Absher wording for a general chat: typed text no plugin answers goes to the engine.
let generalWording: ChatWording = {
    var w = AbsherSettings.wording
    w.uncoveredQuestion = nil
    return w
}()

@Suite("Chat session")
struct ChatSessionTests {
    // Feature: absher-chat-plugins, Property 4: streamed pieces arrive in order without gaps
    @Test("streamed pieces arrive in order without gaps and make up the stored reply (200 cases)")
    func streaming() async throws {
        try await forAll { rng, c in
            let pieces = (0..<rng.int(0...40)).map { _ in
                rng.bool(0.1) ? "" : rng.string(from: Alphabet.any, length: 1...6)
            }
            let log = EventLog()
            let session = await openChat(
                [], engine: ScriptedSession(replies: [pieces]), log: log, wording: generalWording)
            try await session.send(rng.string(from: Alphabet.arabic, length: 1...20), onEvent: log.handler)
            let events = log.events
            let started = try #require(
                events.firstIndex { if case .replyStarted = $0 { return true } else { return false } }, c.label)
            let finished = try #require(
                events.firstIndex { if case .replyFinished = $0 { return true } else { return false } }, c.label)
            var streamed: [(Int, String, Int)] = []
            for (position, e) in events.enumerated() {
                if case .replyPiece(_, let index, let text) = e { streamed.append((index, text, position)) }
            }
            #expect(streamed.map(\.0) == Array(0..<streamed.count), c.label)
            #expect(streamed.allSatisfy { $0.2 > started && $0.2 < finished }, c.label)
            #expect(streamed.map(\.1) == pieces.filter { !$0.isEmpty }, c.label)
            let joined = pieces.joined().trimmingCharacters(in: .whitespacesAndNewlines)
            let reply = try #require(await session.messages.last, c.label)
            #expect(reply.content == (joined.isEmpty ? "…" : joined) && !reply.isUser && reply.deepLink == nil, c.label)
            if case .replyFinished(let stored, let verdict, _) = events[finished] {
                #expect(stored == reply && verdict == nil, c.label)
            }
            let end = await session.snapshot()
            #expect(events.last == .processingChanged(false) && !end.isProcessing, c.label)
        }
    }

    // Feature: absher-chat-plugins, Property 5: submitting non-empty text adds the message and sets processing
    @Test("submitting non-empty text adds the message and sets processing; blank text is refused (200 cases)")
    func submit() async throws {
        try await forAll { rng, c in
            let session = await openChat([])
            let blank = rng.bool(0.3)
            let text =
                blank
                ? rng.string(from: [" ", "\n", "\t"], length: 0...4)
                : rng.string(from: Alphabet.any, length: 1...30) + rng.pick(Alphabet.arabic).description
            let before = await session.messages
            if blank {
                await #expect(throws: ChatError.emptyMessage, c.label) { try await session.submit(text) }
                let s = await session.snapshot()
                #expect(s.messages == before && !s.isProcessing, c.label)
                return
            }
            let turn = try await session.submit(text)
            let after = await session.messages
            #expect(after.count == before.count + 1 && after.last == turn.userMessage, c.label)
            #expect(
                turn.userMessage.content == text && turn.userMessage.isUser && turn.userMessage.deepLink == nil, c.label
            )
            let pending = await session.snapshot()
            #expect(pending.isProcessing && !pending.isInputEnabled, c.label)
            await #expect(throws: ChatError.busy, c.label) { try await session.submit("again") }
            await session.respond(to: turn)
            let done = await session.snapshot()
            #expect(!done.isProcessing && done.isInputEnabled, c.label)
            #expect(done.messages.count == before.count + 2, c.label)
        }
    }

    @Test("an engine that fails to load: an error message, input disabled, and a retry that recovers")
    func engineFailure() async throws {
        let attempts = Counter()
        let engine = ScriptedSession(replies: [["أهلاً"]])
        let session = ChatSession(
            plugins: [], configuration: ChatConfiguration(wording: generalWording), now: { sampleNow },
            loadEngine: {
                if attempts.increment() == 1 { throw SanadError.modelNotFound(name: "m.gguf", searched: ["/models"]) }
                return engine
            })
        await session.open()
        let failed = await session.snapshot()
        #expect(failed.canRetry && !failed.isInputEnabled)
        let messages = await session.messages
        #expect(
            messages.count == 2 && messages[1].content.contains("تعذّر تشغيل المحرك")
                && messages[1].content.contains("m.gguf"))
        await #expect(throws: ChatError.self) { try await session.send("مرحبا") }
        let unchanged = await session.messages
        #expect(unchanged.count == 2)
        await session.retry()
        let ready = await session.snapshot()
        #expect(ready.engineState == .ready && ready.isInputEnabled && !ready.canRetry)
        try await session.send("مرحبا")
        let last = await session.messages.last
        #expect(last?.content == "أهلاً")
    }

    @Test("a generation that fails midway adds an error message and re-enables input")
    func generationFailure() async throws {
        let log = EventLog()
        let session = await openChat(
            [], engine: ScriptedSession(replies: [["a", "b", "c"]], failAfter: 2), log: log, wording: generalWording)
        try await session.send("x", onEvent: log.handler)
        let pieces = log.events.compactMap { e -> String? in
            if case .replyPiece(_, _, let t) = e { return t } else { return nil }
        }
        #expect(pieces == ["a", "b"])
        let s = await session.snapshot()
        #expect(s.messages.last?.content.contains("scripted failure") == true)
        #expect(!s.isProcessing && s.isInputEnabled)
    }

    @Test(
        "a tapped chip's reply: kept with a ✓ check when it states the facts, else the template with a ⚠ check; the link is attached"
    )
    func groundedReplies() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let data = try UserData.load(from: url, plugin: "t")
        let alerts = ProactiveAlertsPlugin(userData: data, window: AbsherWindow(now: { sampleNow }))
        let good = ["رخصة ", "قيادتك", " على وشك الانتهاء، باقي ", "45", " يوم. جددها الآن."]
        let bad = ["Your ", "licence ", "expires ", "in 30 days."]
        let engine = ScriptedSession(replies: [good, bad])
        let session = await openChat([alerts], engine: engine)
        try await session.sendSuggestion(number: 1)
        let first = try #require(await session.messages.last)
        #expect(first.content == good.joined() && first.check?.verified == true)
        #expect(first.check?.note.hasPrefix("✓") == true && first.check?.note.contains("45") == true)
        #expect(first.deepLink == alerts.alerts[0].deepLink)
        #expect(
            engine.prompts.last?.contains("45") == true && engine.prompts.last?.contains(alerts.alerts[0].title) == true
        )
        await session.returnToChat()
        try await session.sendSuggestion(number: 1)
        let second = try #require(await session.messages.last)
        #expect(second.content == AlertReply.fallback(for: alerts.alerts[0]) && second.check?.verified == false)
        // Why the draft failed quotes it ("30"): without --show-drafts the note only says the template answers.
        #expect(second.check == ReplyCheck(verified: false, note: AbsherSettings.wording.templateNote))
        #expect(second.deepLink == alerts.alerts[0].deepLink)
        #expect(engine.resets == 2)
    }

    @Test("a tier that words grounded replies with templates answers a chip at once: no engine, no draft, a ✓ note")
    func templatePhrasing() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let data = try UserData.load(from: url, plugin: "t")
        let alerts = ProactiveAlertsPlugin(userData: data, window: AbsherWindow(now: { sampleNow }))
        let engine = ScriptedSession(replies: [["never", " asked"]])
        let session = await openChat([alerts], engine: engine, phrasing: .template)
        try await session.sendSuggestion(number: 1)
        let reply = try #require(await session.messages.last)
        #expect(reply.content == AlertReply.fallback(for: alerts.alerts[0]))
        #expect(reply.check == ReplyCheck(verified: true, note: AbsherSettings.wording.templateChosenNote))
        #expect(reply.deepLink == alerts.alerts[0].deepLink)
        #expect(engine.prompts.isEmpty && engine.resets == 0, "the engine is not used")
    }

    /// Every text a front end could show from `events`: messages, streamed pieces, drafts, pages.
    func shownText(_ events: [ChatEvent]) -> String {
        events.map { e -> String in
            switch e {
            case .messageAdded(let m): return m.content + " " + (m.check.map { $0.note + ($0.draft ?? "") } ?? "")
            case .replyPiece(_, _, let t): return t
            case .draftChecked(_, let d, _): return d
            case .replyFinished(let m, let v, _):
                return m.content + " " + (m.check.map { $0.note + ($0.draft ?? "") } ?? "") + "\(String(describing: v))"
            default: return ""
            }
        }.joined(separator: "\n")
    }

    @Test(
        "only verified text is shown: a draft that fails is generated unseen and the template streams; --show-drafts reveals it",
        arguments: [false, true])
    func draftsUnseen(showDrafts: Bool) async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let data = try UserData.load(from: url, plugin: "t")
        let alerts = ProactiveAlertsPlugin(userData: data, window: AbsherWindow(now: { sampleNow }))
        // A draft a government assistant must never show: the wrong authority and a number not in the data.
        let draft = ["Apply ", "through the ", "UAE Visa ", "Authority ", "within ", "30 days."]
        let log = EventLog()
        let session = await openChat(
            [alerts], engine: ScriptedSession(replies: [draft]), log: log, showDrafts: showDrafts)
        try await session.sendSuggestion(number: 1, onEvent: log.handler)
        try await session.send("وش عندي تنبيهات؟", onEvent: log.handler)
        let shown = shownText(log.events)
        // Neither the draft nor the reasons that quote its words ("uae, visa, authority").
        #expect(shown.lowercased().contains("uae") == showDrafts, "\(shown)")
        let fallback = AlertReply.fallback(for: alerts.alerts[0])
        let pieces = log.events.compactMap { e -> String? in
            if case .replyPiece(_, _, let t) = e { return t } else { return nil }
        }
        #expect(pieces.first == fallback)
        let replies = await session.messages.filter { $0.check != nil }
        #expect(replies.count == 2 && replies.allSatisfy { $0.check?.verified == false })
        let history = String(decoding: try ChatEntry.encodeHistory(await session.messages), as: UTF8.self)
        #expect(history.contains("UAE Visa") == showDrafts)
        if showDrafts {
            #expect(replies[0].check?.draft == draft.joined() && replies[0].check?.note.contains("30") == true)
            // The draft is reported before the reply starts, and the reply streams the template.
            let drafted = try #require(
                log.events.firstIndex { if case .draftChecked = $0 { return true } else { return false } })
            let started = try #require(
                log.events.firstIndex { if case .replyStarted = $0 { return true } else { return false } })
            #expect(drafted < started)
        }
    }

    @Test("a grounded draft stops at the first number the data does not have")
    func draftStopsEarly() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let data = try UserData.load(from: url, plugin: "t")
        let alerts = ProactiveAlertsPlugin(userData: data, window: AbsherWindow(now: { sampleNow }))
        let pieces = ["رخصة قيادتك", " تنتهي", " بعد ", "3", "0", " يوماً", " وتكلف", " 99", " ريال"]
        let log = EventLog()
        let session = await openChat(
            [alerts], engine: ScriptedSession(replies: [pieces]), log: log, showDrafts: true)
        try await session.sendSuggestion(number: 1, onEvent: log.handler)
        let drafts = log.events.compactMap { e -> String? in
            if case .draftChecked(_, let d, _) = e { return d } else { return nil }
        }
        // "30" is a whole number once " يوماً" follows it: generation stops after that piece.
        #expect(drafts == [pieces.prefix(6).joined()])
        let reply = try #require(await session.messages.last)
        #expect(reply.content == AlertReply.fallback(for: alerts.alerts[0]) && reply.check?.verified == false)
    }

    @Test("history is saved and restored exactly; a dismissed chat refuses input until /back")
    func history() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let (alerts, dependents) = try makePlugins(
            try JSONValue.parse(Data(contentsOf: url)).withoutNote, now: sampleNow)
        let session = await openChat([alerts, dependents], engine: ScriptedSession(replies: [["نص"]]))
        try await session.sendSuggestion(number: 1)
        let file = try TestPaths.temporaryDirectory().appendingPathComponent("history.json")
        try await session.saveHistory(to: file)
        let saved = await session.messages
        #expect(saved.count == 4 && saved.map(\.isUser) == [false, true, false, false])
        let other = await openChat([])
        try await other.loadHistory(from: file)
        let restored = await other.messages
        #expect(restored == saved)
        let links = await session.links
        #expect(links.map(\.serviceType) == ["driving_license_renewal", "dependents"])
        try await session.follow(links[1])
        await #expect(throws: ChatError.self) { try await session.send("hi") }
        await session.returnToChat()
        try await session.send("hi")
        await #expect(throws: ChatError.self) {
            try await other.loadHistory(from: file.appendingPathExtension("missing"))
        }
    }

    @Test("plugin options are strict and name the config file and key")
    func options() throws {
        let dir = try TestPaths.temporaryDirectory()
        let config = dir.appendingPathComponent("tier-x.json")
        let sample = try #require(AbsherSettings.sampleUserDataURL)
        func make(_ options: [String: JSONValue]) throws -> ProactiveAlertsPlugin {
            try ProactiveAlertsPlugin(context: PluginContext(options: options, dataDirectory: dir, configFile: config))
        }
        #expect(try make(["userData": .string(sample.path), "windowDays": .number(30)]).window.days == 30)
        let cases: [([String: JSONValue], String)] = [
            ([:], "option 'userData': missing"),
            (["userData": .string("nope.json")], "\(dir.path)/nope.json does not exist"),
            (["userData": .string(sample.path), "windowDays": .number(-1)], "option 'windowDays': must be in 0…3650"),
            (
                ["userData": .string(sample.path), "window": .number(3)],
                "option 'window': unknown option; valid options: userData, windowDays, timeZone"
            ),
            (["userData": .string(sample.path), "timeZone": .string("Mars/Base")], "'Mars/Base' is not a time zone"),
        ]
        for (options, expected) in cases {
            #expect {
                _ = try make(options)
            } throws: { error in
                "\(error)".contains(config.path) && "\(error)".contains(expected)
            }
        }
    }

    @Test("user data errors name the file and the key path")
    func userDataErrors() {
        let cases: [(String, String)] = [
            (
                #"{"documents": [{"id": "a", "type": "visa", "expiryDate": "2027-01-01"}]}"#,
                "documents[0].type: 'visa' is not one of: driving_license, passport, national_id"
            ),
            (
                #"{"documents": [{"id": "a", "type": "passport", "expiryDate": "06/01/2027"}]}"#,
                "documents[0].expiryDate: '06/01/2027' is not a date"
            ),
            (
                #"{"documents": [{"id": "a", "type": "passport", "expiryDate": "2027-01-01"}, {"id": "a", "type": "passport", "expiryDate": "2027-01-01"}]}"#,
                "documents[1].id: 'a' is used by an earlier document"
            ),
            (#"{"documents": [], "extra": 1}"#, "extra: unknown key"),
            (#"{"dependents": []}"#, "documents: missing required key"),
        ]
        for (text, expected) in cases {
            #expect {
                _ = try UserData.decode(try JSONValue.parse(text), file: generatedFile, plugin: "proactive-alerts")
            } throws: { error in
                "\(error)".contains("/generated/user.json: \(expected)")
            }
        }
    }

    @Test("the host's open_deep_link tool and the plugins' tools")
    func tools() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let (alerts, dependents) = try makePlugins(
            try JSONValue.parse(Data(contentsOf: url)).withoutNote, now: sampleNow)
        let open = OpenDeepLinkTool(plugins: [alerts, dependents], format: AbsherSettings.linkFormat)
        let page = try await open.call(.object(["url": .string("absher://service/dependents?alert=dep-1")]))
        #expect(page["screen"] == .string("dependents"))
        await #expect(throws: ToolError.self) { try await open.call(.object(["url": .string("absher://nope")])) }
        await #expect(throws: ToolError.self) { try await open.call(.object(["link": .string("x")])) }
        let list = try #require(alerts.tools.first { $0.name == "list_alerts" })
        let result = try await list.call(.object([:]))
        #expect(result["alerts"]?.arrayValue?.compactMap { $0["daysRemaining"]?.intValue } == [45, 75])
        let deps = try #require(dependents.tools.first { $0.name == "list_dependents" })
        let listed = try await deps.call(.null)
        #expect(listed["skipped"]?.arrayValue?.count == 1)
        let names = (alerts.tools + dependents.tools).map(\.name) + [open.name]
        #expect(Set(names).count == names.count)
    }
}

final class Counter: @unchecked Sendable {  // @unchecked: its count behind its lock
    private let lock = NSLock()
    private var value = 0
    func increment() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

extension JSONValue {
    /// The sample file without its `note` (generated-data helpers take only documents and dependents).
    var withoutNote: JSONValue {
        guard case .object(var o) = self else { return self }
        o["note"] = nil
        o["user"] = nil
        return .object(o)
    }
}

@Suite("Chat wording")
struct ChatWordingTests {
    /// Arabic letters in `text`.
    func arabicLetters(_ text: String) -> Int {
        text.unicodeScalars.filter { (0x0600...0x06FF).contains($0.value) }.count
    }

    @Test("the chat layer's own texts are neutral; the Absher wording comes from AbsherData")
    func neutralDefaults() async throws {
        let session = ChatSession(
            plugins: [], now: { sampleNow },
            loadEngine: { throw SanadError.modelNotFound(name: "m.gguf", searched: ["/models"]) })
        await session.open()
        let messages = await session.messages
        #expect(messages.count == 2 && messages.allSatisfy { arabicLetters($0.content) == 0 }, "\(messages)")
        #expect(messages[1].content.contains("m.gguf"))
        let reply = GroundedReply(
            messages: [], facts: [GroundingFact(name: "days", accepted: ["45"])], fallback: "45 days")
        let verdict = GroundingCheck.verify("", against: reply)
        #expect(arabicLetters(verdict.note(ChatWording())) == 0)
        let absher = GroundingCheck.verify("", against: reply, wording: AbsherSettings.wording)
        #expect(absher == .rejected(reasons: ["النص فارغ"]) && absher.note(AbsherSettings.wording).hasPrefix("⚠"))
    }

    @Test("the Absher wording keeps one language per line: an English error detail goes on a line of its own")
    func oneLanguagePerLine() {
        let w = AbsherSettings.wording
        let detail = "cannot open /models/m.gguf: No such file or directory (errno 2)"
        let texts = [
            w.suggestionsFailed("forms", detail), w.engineFailed(detail), w.replyPreparationFailed(detail),
            w.replyFailed(detail), w.followUpsFailed("dependents", detail), w.linkFailed(detail),
            w.engineUnloaded("MemAvailable 90 MiB < 128 MiB"), w.replyTimedOut(120), w.uncoveredQuestion?([]) ?? "",
        ]
        for text in texts {
            #expect(arabicLetters(text) > 0, "\(text)")
            for line in text.split(separator: "\n") {
                let latin = line.unicodeScalars.filter { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }.count
                #expect(latin == 0 || arabicLetters(String(line)) == 0, "mixed line: \(line)")
            }
        }
    }
}
