package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link SparkGpuConf#ADDRESS_MAP}: Spark's gpu addresses to CUDA ordinals, and its errors. */
class SparkGpuConfAddressMapTest {

    @Test
    void unsetMapMeansTheAddressIsTheOrdinal() {
        assertEquals(3, SparkGpuConf.ordinalOfAddress(" 3 ", ""));
        assertEquals(0, SparkGpuConf.ordinalOfAddress("0", null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SparkGpuConf.ordinalOfAddress("gpu0", ""));
        assertTrue(e.getMessage().contains("'gpu0'") && e.getMessage().contains(SparkGpuConf.ADDRESS_MAP), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SparkGpuConf.ordinalOfAddress("-1", ""));
    }

    @Test
    void mapSendsAddressesToOrdinals() {
        assertEquals(0, SparkGpuConf.ordinalOfAddress("0", "0:0,1:0"));
        assertEquals(0, SparkGpuConf.ordinalOfAddress("1", "0:0, 1:0"));
        assertEquals(2, SparkGpuConf.ordinalOfAddress("gpu-b", "gpu-a:1,gpu-b:2"));
    }

    @Test
    void badMapsAndMissingAddressesAreErrorsNotDeviceZero() {
        String[][] bad = {{"0:0,1", "address:ordinal pairs"}, {"0:x", "ordinal >= 0"}, {"0:-1", "ordinal >= 0"},
            {"0:0,0:1", "each address once"}, {":1", "address:ordinal pairs"}};
        for (String[] b : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SparkGpuConf.ordinalOfAddress("0", b[0]), b[0]);
            assertTrue(e.getMessage().startsWith(SparkGpuConf.ADDRESS_MAP) && e.getMessage().contains(b[1]),
                    b[0] + ": " + e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SparkGpuConf.ordinalOfAddress("2", "0:0,1:0"));
        assertTrue(e.getMessage().contains("'2' is not in '0:0,1:0'"), e.getMessage());
    }

    @Test
    void theDriverChecksTheMapsSyntaxBeforeAnyTask() {
        String before = System.getProperty(SparkGpuConf.ADDRESS_MAP);
        try {
            System.clearProperty(SparkGpuConf.ADDRESS_MAP);
            SparkGpuConf.checkAddressMap(); // unset: passes
            System.setProperty(SparkGpuConf.ADDRESS_MAP, "0:0,1:0");
            SparkGpuConf.checkAddressMap();
            System.setProperty(SparkGpuConf.ADDRESS_MAP, "0=0");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, SparkGpuConf::checkAddressMap);
            assertTrue(e.getMessage().startsWith(SparkGpuConf.ADDRESS_MAP) && e.getMessage().contains("'0=0'"),
                    e.getMessage());
            // the same settings error inside a task is an IllegalArgumentException, not a device failure, so
            // backend=auto cannot turn a mistyped map into a silent CPU fit
            assertTrue(!BackendChooser.isDeviceFailure(e));
        } finally {
            if (before == null) {
                System.clearProperty(SparkGpuConf.ADDRESS_MAP);
            } else {
                System.setProperty(SparkGpuConf.ADDRESS_MAP, before);
            }
        }
    }
}
