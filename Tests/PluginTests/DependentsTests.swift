import AbsherData
import DependentsPlugin
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

@Suite("Dependents")
struct DependentsTests {
    @Test("the sample user's son: the exact message of the issue, with a dependents link")
    func sample() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let data = try UserData.load(from: url, plugin: "t")
        let plugin = DependentsPlugin(
            list: try DependentList(data.dependents, file: url.path, plugin: "t"),
            window: AbsherWindow(now: { sampleNow }))
        #expect(plugin.list.dependents.count == 2 && plugin.list.skipped.map(\.index) == [2])
        let chip = ChatSuggestion(id: "c", text: "t", pluginID: "proactive-alerts")
        let reply = ChatEntry(content: "r", isUser: false, timestamp: sampleNow)
        let messages = try await plugin.followUps(after: ReplyContext(suggestion: chip, userText: "t", reply: reply))
        #expect(messages.map(\.content) == ["ولدك حسام باقي له 30 يوماً على اصدار رخصة"])
        #expect(messages.first?.deepLink?.serviceType == "dependents" && messages.first?.deepLink?.alertId == "dep-1")
    }

    // Feature: absher-chat-plugins, Property 7: dependent messages contain name and days
    @Test(
        "after a proactive alert's reply: one message per active dependent, with name, relationship, days and service (200 cases)"
    )
    func followUpMessages() async throws {
        try await forAll { rng, c in
            let now = randomNow(&rng)
            let today = CivilDate.today(now, in: riyadh)
            var json = randomUserJSON(&rng, today: today)
            let window = rng.int(0...120)
            // Exactly one chip to tap.
            if case .object(var o) = json {
                let expiry = today.adding(days: rng.int(0...window)).description
                o["documents"] = .array([
                    .object(["id": .string("lic"), "type": .string("driving_license"), "expiryDate": .string(expiry)])
                ])
                json = .object(o)
            }
            let (alerts, dependents) = try makePlugins(json, now: now, window: window)
            let log = EventLog()
            let session = await openChat(
                [alerts, dependents], engine: ScriptedSession(replies: [["نص"]]), now: now, log: log)
            try await session.sendSuggestion(number: 1, onEvent: log.handler)
            let expected = dependents.list.dependents.filter {
                let d = today.days(until: $0.dueDate)
                return d >= 0 && d <= window
            }
            let messages = await session.messages
            // greeting, chip, reply, then the follow-ups
            let followUps = Array(messages.dropFirst(3))
            #expect(followUps.count == expected.count, c.label)
            #expect(Set(followUps.compactMap(\.deepLink?.alertId)) == Set(expected.map(\.id)), c.label)
            for m in followUps {
                let d = try #require(expected.first { $0.id == m.deepLink?.alertId }, c.label)
                let days = today.days(until: d.dueDate)
                #expect(
                    m.content
                        == "\(d.relationship) \(d.name) باقي \(d.isFemale ? "لها" : "له") \(arabicDays(days)) على \(d.service)",
                    c.label)
                #expect(m.content.contains(d.name) && m.content.contains(arabicDays(days)) && !m.isUser, c.label)
                #expect(m.deepLink?.serviceType == "dependents", c.label)
            }
            // Typed text gets no dependents' messages.
            let count = await session.messages.count
            try await session.send("مرحبا")
            let total = await session.messages.count
            #expect(total == count + 2, c.label)
        }
    }

    // Feature: absher-chat-plugins, Property 8: dependents links → the dependents page; alert types → the dashboard
    @Test("dependents links go to the dependents page, the three alert types to the dashboard (200 cases)")
    func routing() async throws {
        try await forAll { rng, c in
            let now = randomNow(&rng)
            let (alerts, dependents) = try makePlugins(
                randomUserJSON(&rng, today: CivilDate.today(now, in: riyadh)), now: now)
            var links: [(DeepLink, String)] = dependents.list.dependents.map { ($0.deepLink, "dependents") }
            links += alerts.userData.documents.map {
                (
                    DeepLink(
                        serviceType: $0.type.renewalService.rawValue, title: $0.type.renewalService.title,
                        alertId: $0.id), "dashboard"
                )
            }
            for (link, screen) in links {
                let session = await openChat([alerts, dependents], now: now)
                let page = try await session.follow(url: link.url(AbsherSettings.linkFormat))
                #expect(page.screen == screen && page.link == link, c.label)
            }
            #expect(
                Set(links.filter { $0.1 == "dashboard" }.map(\.0.serviceType)).isSubset(
                    of: Set(AlertServiceType.allCases.map(\.rawValue))), c.label)
        }
    }

    // Feature: absher-chat-plugins, Property 9: the dependents page shows every field
    @Test(
        "the dependents page shows every field of every complete dependent and leaves out incomplete ones (200 cases)")
    func page() throws {
        try forAll { rng, c in
            let now = randomNow(&rng)
            let today = CivilDate.today(now, in: riyadh)
            let (_, dependents) = try makePlugins(randomUserJSON(&rng, today: today), now: now)
            let all = dependents.list
            let link = all.dependents.first?.deepLink ?? DeepLink(serviceType: "dependents", title: "", alertId: "none")
            let page = dependents.page(link: link)
            #expect(page.notes.contains("لا يوجد تابعون.") == all.dependents.isEmpty, c.label)
            #expect(page.screen == "dependents" && page.sections.count == all.dependents.count, c.label)
            for (section, d) in zip(page.sections, all.dependents) {
                let values = section.fields.map(\.value)
                let days = today.days(until: d.dueDate)
                #expect(
                    values.contains(d.name) && values.contains(d.relationship) && values.contains(d.service), c.label)
                #expect(values.contains(d.dueDate.description), c.label)
                #expect(values.contains { $0 == "\(days)" || $0.hasSuffix(arabicDays(-days, genitive: true)) }, c.label)
                #expect(section.fields.allSatisfy { !$0.value.trimmingCharacters(in: .whitespaces).isEmpty }, c.label)
                #expect(
                    page.text(AbsherSettings.linkFormat).contains(d.name)
                        && page.text(AbsherSettings.linkFormat).contains(d.service), c.label)
            }
            #expect(
                page.notes.contains { $0.contains(arabicCount(all.skipped.count, .record)) } == !all.skipped.isEmpty,
                c.label)
        }
    }

    @Test("incomplete entries are skipped with the missing field named; an unknown key is an error")
    func leniency() throws {
        let entries: [JSONValue] = [
            .object([
                "name": .string("حسام"), "relationship": .string("ولدك"), "service": .string("اصدار رخصة"),
                "dueDate": .string("2026-12-22"),
            ]),
            .object(["relationship": .string("ولدك"), "service": .string("x"), "dueDate": .string("2026-12-22")]),
            .object([
                "name": .string("ريم"), "relationship": .string("بنتك"), "service": .string(" "),
                "dueDate": .string("2026-02-30"),
            ]),
            .string("nonsense"),
        ]
        let list = try DependentList(entries, file: "u.json", plugin: "dependents")
        #expect(list.dependents.map(\.name) == ["حسام"] && list.dependents.first?.id == "dependent-1")
        #expect(
            list.skipped == [
                SkippedDependent(index: 1, problems: ["name"]),
                SkippedDependent(index: 2, problems: ["service", "dueDate"]),
                SkippedDependent(index: 3, problems: ["not an object"]),
            ])
        #expect {
            _ = try DependentList([.object(["nmae": .string("x")])], file: "u.json", plugin: "dependents")
        } throws: { "\($0)".contains("u.json: dependents[0].nmae: unknown key") }
    }
}
