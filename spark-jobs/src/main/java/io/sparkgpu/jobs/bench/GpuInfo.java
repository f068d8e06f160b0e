package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.isotonic.IsotonicEngine;
import io.sparkgpu.kmeans.KMeansEngine;
import java.util.Locale;

/**
 * First check on a GPU host: can this JVM load JCuda, reach the driver, open each device and load our
 * kernels? Prints one line per fact; exit status 0 when every device runs the k-means kernels, 1 otherwise.
 * Needs no Spark.
 */
public final class GpuInfo {
    private GpuInfo() {
    }

    public static void main(String[] args) {
        System.out.println("java: " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name")
                + "), " + Runtime.getRuntime().availableProcessors() + " cores, max heap "
                + (Runtime.getRuntime().maxMemory() >> 20) + " MiB");
        CudaRuntime.Status st = CudaRuntime.status();
        System.out.println("cuda: " + (st.available ? st.deviceCount + " device(s), driver API "
                + st.driverVersion / 1000 + "." + (st.driverVersion % 1000) / 10 : "unavailable: " + KMeansBenchmark.shortReason(st.reason)));
        boolean ok = st.available;
        for (int i = 0; st.available && i < st.deviceCount; i++) {
            try {
                CudaDevice dev = CudaRuntime.device(i);
                long[] mem = dev.memoryInfo();
                System.out.println(String.format(Locale.ROOT, "device %d: %s, peak DRAM %.0f GB/s, %d MiB free of %d MiB",
                        i, dev, dev.peakBandwidthGBs(), mem[0] >> 20, mem[1] >> 20));
                KMeansEngine.load(dev);
                System.out.println("device " + i + ": kernels of module '" + KMeansEngine.MODULE + "' load");
                IsotonicEngine.load(dev);
                System.out.println("device " + i + ": kernels of module '" + IsotonicEngine.MODULE + "' load");
            } catch (RuntimeException | LinkageError e) {
                ok = false;
                System.out.println("device " + i + ": NOT usable: " + e);
            }
        }
        System.exit(ok ? 0 : 1);
    }
}
