package io.sparkgpu.jobs;

import java.util.Map;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import scala.Option;

/**
 * The defaults of the options that set an estimator's params are that estimator's param defaults (so the CLI has
 * no defaults of its own, and {@code --help} prints the estimator's): picocli asks this provider, commands say which
 * option is which param ({@link Source}). An option whose param has no default (seed aside, every such option is
 * optional, e.g. {@code --backend}) gets none: the param is then left unset.
 */
final class EstimatorDefaults implements CommandLine.IDefaultValueProvider {
    /** A command whose options map onto the params of an estimator. */
    interface Source {
        /** An estimator with its default params (not otherwise used). */
        Params defaults();

        /** Longest option name ("--max-iter", "-k") to param name ("maxIter", "k"). */
        Map<String, String> paramOfOption();
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec) || !(arg.command().userObject() instanceof Source)) {
            return null;
        }
        Source source = (Source) arg.command().userObject();
        String name = source.paramOfOption().get(((OptionSpec) arg).longestName());
        Params p = source.defaults();
        if (name == null || !p.hasParam(name)) {
            return null;
        }
        Param<Object> param = p.getParam(name);
        Option<Object> d = p.getDefault(param);
        return d.isDefined() ? String.valueOf(d.get()) : null;
    }
}
