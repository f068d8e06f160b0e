package io.sparkgpu.jobs.notebooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Static checks of the committed notebooks (fast; no Jupyter needed): Jupyter notebooks are stored without
 * outputs and use the project's kernel; Zeppelin notes are stored without results. Executing them is
 * {@link NotebooksIT}'s and {@link ZeppelinNotesTest}'s job.
 */
class NotebookFilesTest {
    private static final String CLEAR_HINT = "clear it before committing: notebooks/jupyter.sh nbconvert "
            + "--clear-output --inplace ";

    @Test
    void thereAreNotebooks() {
        assertFalse(NotebookPaths.files(NotebookPaths.JUPYTER_DIR, ".ipynb").isEmpty(),
                "no .ipynb under " + NotebookPaths.JUPYTER_DIR);
        assertFalse(NotebookPaths.files(NotebookPaths.ZEPPELIN_DIR, ".zpln").isEmpty(),
                "no .zpln under " + NotebookPaths.ZEPPELIN_DIR);
    }

    @TestFactory
    Stream<DynamicTest> jupyterNotebooksAreCommittedWithoutOutputs() {
        return NotebookPaths.files(NotebookPaths.JUPYTER_DIR, ".ipynb").stream()
                .map(f -> DynamicTest.dynamicTest(NotebookPaths.rel(f), () -> checkJupyter(f)));
    }

    private static void checkJupyter(Path file) {
        String name = NotebookPaths.rel(file);
        JsonNode nb = NotebookPaths.read(file);
        assertEquals(4, nb.path("nbformat").asInt(), name + ": nbformat");
        assertEquals(NotebookPaths.KERNEL_NAME, nb.path("metadata").path("kernelspec").path("name").asText(),
                name + " must use the kernel '" + NotebookPaths.KERNEL_NAME + "' (scripts/setup-notebooks.sh)");
        JsonNode cells = nb.path("cells");
        assertTrue(cells.isArray() && cells.size() > 0, name + " has no cells");
        List<String> dirty = new ArrayList<>();
        for (int i = 0; i < cells.size(); i++) {
            JsonNode cell = cells.get(i);
            if (!"code".equals(cell.path("cell_type").asText())) {
                continue;
            }
            JsonNode outputs = cell.path("outputs");
            if (outputs.isArray() && outputs.size() > 0) {
                dirty.add(NotebookPaths.describe(cell, i) + " has " + outputs.size() + " output(s)");
            }
            if (!cell.path("execution_count").isNull() && !cell.path("execution_count").isMissingNode()) {
                dirty.add(NotebookPaths.describe(cell, i) + " has execution_count " + cell.get("execution_count"));
            }
        }
        if (!dirty.isEmpty()) {
            fail(name + " is committed with outputs; " + CLEAR_HINT + name + "\n  " + String.join("\n  ", dirty));
        }
    }

    @TestFactory
    Stream<DynamicTest> zeppelinNotesAreCommittedWithoutResults() {
        return NotebookPaths.files(NotebookPaths.ZEPPELIN_DIR, ".zpln").stream()
                .map(f -> DynamicTest.dynamicTest(NotebookPaths.rel(f), () -> checkZeppelin(f)));
    }

    private static void checkZeppelin(Path file) {
        String name = NotebookPaths.rel(file);
        JsonNode note = NotebookPaths.read(file);
        JsonNode paragraphs = note.path("paragraphs");
        assertTrue(paragraphs.isArray() && paragraphs.size() > 0, name + " has no paragraphs");
        List<String> dirty = new ArrayList<>();
        for (int i = 0; i < paragraphs.size(); i++) {
            JsonNode p = paragraphs.get(i);
            JsonNode results = p.path("results");
            if (!results.isMissingNode() && !results.isNull() && results.size() > 0) {
                dirty.add("paragraph #" + i + " (" + p.path("id").asText() + ") has results");
            }
        }
        if (!dirty.isEmpty()) {
            fail(name + " is committed with results; clear them in Zeppelin (Clear output) before exporting\n  "
                    + String.join("\n  ", dirty));
        }
    }
}
