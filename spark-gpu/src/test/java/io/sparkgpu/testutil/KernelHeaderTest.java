package io.sparkgpu.testutil;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The header reader of the layout tests evaluates macros as C does. */
class KernelHeaderTest {

    private static final String TEXT = String.join("\n",
            "/* a comment with #define NOT_A_MACRO 1 */",
            "#pragma once",
            "#define A 1 + 2          // no parentheses: textual expansion",
            "#define B (2 * A)        /* 2 * 1 + 2 = 4, as C computes it */",
            "#define C(x, y) ((x) * (y) + B)",
            "#define D(k) (((k) + 3) & ~3)",
            "#define E(d) ((d) <= 16 ? 4 : ((d) <= 32 ? 2 : 1))",
            "#define F (-37)",
            "#define G 0xffull",
            "#define H (1 << 8)",
            "#define LONG(a, b)                      \\",
            "    (4 * ((a) + (b))                    \\",
            "     + 8 * (a))",
            "#define R 0.6931471803691238",
            "#define NEG (!0 + (3 > 2) + (2 == 2) + (1 != 1) + (0 || 5) + (0 && 5) + (7 % 4) + (9 / 2) \\",
            "             + (6 ^ 3) + (6 | 1))");

    @Test
    void evaluatesLikeTheCPreprocessorAndCompiler() {
        KernelHeader h = KernelHeader.parse("test.cuh", TEXT);
        assertEquals(3, h.value("A"));
        assertEquals(4, h.value("B"));
        assertEquals(3 * 5 + 4, h.eval("C", 3, 5));
        assertEquals(-2 * 5 + 4, h.eval("C", -2, 5));
        assertEquals(8, h.eval("D", 5));
        assertEquals(8, h.eval("D", 8));
        assertEquals(4, h.eval("E", 16));
        assertEquals(2, h.eval("E", 17));
        assertEquals(1, h.eval("E", 64));
        assertEquals(-37, h.value("F"));
        assertEquals(255, h.value("G"));
        assertEquals(256, h.value("H"));
        assertEquals(4 * 5 + 8 * 2, h.eval("LONG", 2, 3));
        assertEquals(Double.longBitsToDouble(0x3FE62E42FEE00000L), h.doubleValue("R"));
        assertEquals(1 + 1 + 1 + 0 + 1 + 0 + 3 + 4 + 5 + 7, h.value("NEG"));
        h.assertAllCompared();
    }

    @Test
    void rejectsWhatItCannotCheck() {
        KernelHeader h = KernelHeader.parse("test.cuh", TEXT);
        assertThrows(IllegalArgumentException.class, () -> h.value("NOT_A_MACRO"));
        assertThrows(IllegalArgumentException.class, () -> h.eval("C", 1));
        assertThrows(IllegalArgumentException.class, () -> h.value("R"));
        h.value("A");
        assertThrows(AssertionError.class, h::assertAllCompared);
        assertThrows(IllegalStateException.class, () -> KernelHeader.parse("twice.cuh", "#define X 1\n#define X 2"));
    }
}
