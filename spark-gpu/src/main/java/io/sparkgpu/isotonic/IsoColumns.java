package io.sparkgpu.isotonic;

import java.io.Serializable;

/** Names of the label, feature and weight inputs, used only in error messages (weight null: unweighted). */
public final class IsoColumns implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final IsoColumns DEFAULT = new IsoColumns("labelCol 'label'", "featuresCol 'features'", "weightCol");

    public final String label;
    public final String feature;
    public final String weight;

    /** Each argument is how the input is named in messages, e.g. {@code "labelCol 'y'"}. */
    public IsoColumns(String label, String feature, String weight) {
        this.label = label;
        this.feature = feature;
        this.weight = weight;
    }
}
