import Foundation
import PackagePlugin

/// Build-tool plugin: turns `Simulator/fixtures/github/` into Swift source inside GitHubAPI,
/// so the fixture GitHub catalog ships in the binary and a copied `watchrelay` serves it from
/// any directory. The fixture files stay the one source of truth (regenerated on change).
@main
struct EmbedFixtures: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let fixtures = context.package.directoryURL.appending(path: "Simulator/fixtures/github")
        let manager = FileManager.default
        var inputs: [URL] = []
        for sub in ["users", "repos"] {
            let dir = fixtures.appending(path: sub)
            let names = (try? manager.contentsOfDirectory(atPath: dir.path)) ?? []
            inputs += names.filter { $0.hasSuffix(".json") }.sorted().map { dir.appending(path: $0) }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFixtures.swift")
        return [
            .buildCommand(
                displayName: "Embedding the fixture GitHub catalog",
                executable: try context.tool(named: "FixtureEmbedder").url,
                arguments: [fixtures.path, output.path],
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
