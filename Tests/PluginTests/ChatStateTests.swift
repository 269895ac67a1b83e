import AbsherData
import DependentsPlugin
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

/// A chat over `plugins` with `configure` applied to the Absher configuration, and a loader that counts its calls.
func stateChat(
    _ plugins: [any FeaturePlugin], engine: ScriptedSession, loads: Counter = Counter(),
    configure: (inout ChatConfiguration) -> Void
) async -> ChatSession {
    var configuration = AbsherSettings.product.configuration()
    configure(&configuration)
    let session = ChatSession(
        plugins: plugins, configuration: configuration, now: { sampleNow },
        loadEngine: {
            _ = loads.increment()
            return engine
        })
    await session.open()
    return session
}

/// The states the Absher specification lists (issue 25 item 4): timeout, memory pressure, repeated dependents'
/// messages, a huge message.
@Suite("Chat states")
struct ChatStateTests {
    @Test(
        "a reply that outlasts the timeout is cancelled: free text keeps what came and says so; a grounded one is the template"
    )
    func timeout() async throws {
        let engine = ScriptedSession(replies: [["a", "b", "c", "d", "e", "f"]], pieceDelay: 0.15)
        let free = await stateChat([], engine: engine) {
            $0.wording.uncoveredQuestion = nil
            $0.replyTimeout = 0.4
        }
        try await free.send("مرحبا")
        let messages = await free.messages
        let reply = messages[messages.count - 2]
        #expect(!reply.content.isEmpty && reply.content.count < 6 && "abcdef".hasPrefix(reply.content), "\(reply)")
        #expect(messages.last?.content == "⚠ تأخر الرد أكثر من ثانية واحدة فأوقفه سند.")
        #expect(await free.isInputEnabled)

        let grounded = await stateChat(try samplePlugins(), engine: engine) { $0.replyTimeout = 0.2 }
        try await grounded.send("جوازي متى يخلص؟")
        let answer = try #require(await grounded.messages.last)
        #expect(answer.content.contains("باقي 75 يوماً") && answer.deepLink?.serviceType == "passport_renewal")
        #expect(answer.check == ReplyCheck(verified: false, note: "⚠ تأخر الرد أكثر من ثانية واحدة فأوقفه سند."))
    }

    @Test("memory pressure unloads the engine with a warning; the next message loads it again and is answered")
    func memoryPressure() async throws {
        let loads = Counter()
        let pressure = Counter()
        let engine = ScriptedSession(replies: [["نعم"]])
        let session = await stateChat(try samplePlugins(), engine: engine, loads: loads) {
            $0.memoryPressure = { pressure.increment() == 1 ? "MemAvailable 90 MiB < 128 MiB" : nil }
        }
        try await session.send("جوازي متى يخلص؟")
        let unloaded = await session.snapshot()
        #expect(unloaded.engineState == .unloaded("MemAvailable 90 MiB < 128 MiB") && unloaded.isInputEnabled)
        #expect(
            unloaded.messages.last?.content
                == "⚠ ذاكرة الجهاز منخفضة فأُخرج النموذج منها؛ سيُحمَّل من جديد مع رسالتك التالية.\nMemAvailable 90 MiB < 128 MiB"
        )
        try await session.send("كم رسوم تجديد رخصة القيادة؟")
        let reloaded = await session.snapshot()
        #expect(reloaded.engineState == .ready && loads.increment() == 3)
        #expect(reloaded.messages.last?.content.contains("400 ريال") == true)
    }

    @Test("the dependents' messages appear once, not again after the next alert's reply")
    func dependentsOnce() async throws {
        let plugins = try samplePlugins()
        let session = await openChat(Array(plugins.prefix(2)))
        try await session.sendSuggestion(number: 1)
        try await session.sendSuggestion(number: 2)
        try await session.sendSuggestion(number: 1)
        let reminders = await session.messages.filter { $0.deepLink?.serviceType == "dependents" }
        #expect(reminders.count == 1 && reminders[0].content.contains("حسام"), "\(reminders)")
    }

    @Test("a message larger than the context is cut in the prompt (kept whole in the history); later turns still fit")
    func hugeMessage() async throws {
        let engine = ScriptedSession(replies: [["حسناً"]], contextLength: 400)
        let session = await stateChat([], engine: engine) { $0.wording.uncoveredQuestion = nil }
        let huge = String(repeating: "رسالة طويلة جداً ", count: 300)
        try await session.send(huge)
        try await session.send("وبعد؟")
        let messages = await session.messages
        #expect(messages.filter(\.isUser).map(\.content) == [huge, "وبعد؟"])
        #expect(messages.suffix(3).map(\.content) == ["حسناً", "وبعد؟", "حسناً"], "\(messages.suffix(3))")
        #expect(engine.prompts.count == 2 && engine.prompts.allSatisfy { $0.utf8.count <= 400 - 96 })
        #expect(engine.prompts[1].contains("وبعد؟"))
    }

    @Test("the specification's nine properties each carry their tag ('Feature: absher-chat-plugins, Property N')")
    func propertyTags() throws {
        let folder = TestPaths.packageRoot.appendingPathComponent("Tests/PluginTests")
        var text = ""
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
            text += try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        for n in 1...9 {
            let tag = "// Feature: absher-chat-plugins, Property \(n):"
            #expect(text.components(separatedBy: tag).count == 2, "\(tag) should appear once")
        }
    }
}
